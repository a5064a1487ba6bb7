#pragma once
// A buffer between two inaccessible pages, its end against the upper guard and the slack before
// it filled with a pattern: a write or read past the end faults at once, a write before the start
// shows as a changed pattern.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace posenc::conformance {

class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t bytes) : bytes_(bytes) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    span_ = (bytes + page - 1) / page * page;
    if (span_ == 0) span_ = page;
    total_ = span_ + 2 * page;
    void* base = mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::runtime_error("posenc: mmap failed");
    base_ = static_cast<unsigned char*>(base);
    mprotect(base_, page, PROT_NONE);
    mprotect(base_ + page + span_, page, PROT_NONE);
    slack_ = base_ + page;
    data_ = base_ + page + span_ - bytes;
    std::memset(slack_, kPattern, span_ - bytes);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  ~GuardedBuffer() { munmap(base_, total_); }

  void* data() { return data_; }
  std::size_t bytes() const { return bytes_; }
  bool slack_intact() const {
    for (const unsigned char* p = slack_; p < data_; ++p) {
      if (*p != kPattern) return false;
    }
    return true;
  }

 private:
  static constexpr unsigned char kPattern = 0xA5;
  std::size_t bytes_, span_ = 0, total_ = 0;
  unsigned char* base_ = nullptr;
  unsigned char* slack_ = nullptr;
  unsigned char* data_ = nullptr;
};

}  // namespace posenc::conformance
