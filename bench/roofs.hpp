#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace posenc::bench {

// The distances, in KiB, of the prefetched roofs: those fast/ prefetches at (fast/src/isa.cpp,
// prefetch_distance_bytes).
inline constexpr std::size_t kRoofPrefetchKiB[] = {1, 2, 8};

// The loops a workload's roofs run (baselines.hpp), each with its benchmark's name prefix: the
// copies (out of place: ordinary stores, non-temporal stores, and the latter with the input
// prefetched or in 2 or 4 parts at once) and the in-place scales (plain, prefetched, and in 2 or 4
// parts at once). The fastest of each kind is the
// roof; the registered benchmarks and the paired ratios (paired.hpp) run these same loops.
struct CopyRoof {
  std::string prefix;
  std::function<void(const float* in, float* out, std::size_t n)> run;
};
struct ScaleRoof {
  std::string prefix;
  std::function<void(float* x, std::size_t n)> run;  // by 1: the values stay as they are
};
std::vector<CopyRoof> copy_loops();
std::vector<ScaleRoof> scale_loops();

// The non-temporal copy of n floats split in halves over two threads: the calling one and one
// kept for the object's life, handed each run's half through an atomic it polls (the cheapest
// hand-over there is: the roof for rope_apply's kept, polling workers, fast/src/workers.cpp).
// Between runs the kept thread spins on its core.
class TwoThreadCopy {
 public:
  TwoThreadCopy(const float* in, float* out, std::size_t n);
  ~TwoThreadCopy();
  TwoThreadCopy(const TwoThreadCopy&) = delete;
  TwoThreadCopy& operator=(const TwoThreadCopy&) = delete;
  void run();

 private:
  const float* in_;
  float* out_;
  std::size_t n_, half_;  // half_: the first thread's part, 64-byte aligned
  int handed_ = 0;
  std::atomic<int> calls_{0}, done_{0};  // runs handed over / finished; -1: stop
  std::thread other_;  // last: started once the members it reads are
};

// The reads a decode attention call is measured against (attention_cases.cpp): its cache's bytes
// read once, plain, prefetched 1, 2 or 8 KiB ahead, or in 2 or 4 parts at once (baselines.hpp).
struct ReadRoof {
  std::string prefix;
  std::function<std::uint32_t(const std::uint8_t* p, std::size_t bytes)> run;
};
std::vector<ReadRoof> read_loops();

// Arrays read (each as `read` reads it) split in halves over two threads: the calling one and
// one kept for the object's life. Between runs the kept thread polls for ~100 us, then sleeps
// until the next (as fast/'s workers do, fast/src/workers.cpp): on a machine of two cores a thread
// spinning between runs would take a core from whatever is timed beside it.
class TwoThreadRead {
 public:
  struct Array {
    const std::uint8_t* p;
    std::size_t bytes;
  };
  TwoThreadRead(std::vector<Array> arrays, std::function<std::uint32_t(const std::uint8_t*, std::size_t)> read);
  ~TwoThreadRead();
  TwoThreadRead(const TwoThreadRead&) = delete;
  TwoThreadRead& operator=(const TwoThreadRead&) = delete;
  void run();

 private:
  std::uint32_t half(int which) const;  // 0: the first half of each array, 1: the second
  std::vector<Array> arrays_;
  std::function<std::uint32_t(const std::uint8_t*, std::size_t)> read_;
  int handed_ = 0;
  std::atomic<int> calls_{0}, done_{0};  // runs handed over / finished; -1: stop
  std::atomic<std::uint32_t> sink_{0};
  std::thread other_;  // last: started once the members it reads are
};

// PREFIX/W for every loop above and every workload W (common.hpp), and
// copy_nontemporal_2threads/W for those run on 2 threads.
void register_roofs();

// The names of W's copies and of its in-place scales: the fastest of each is W's roof out of
// place and in place.
std::vector<std::string> copy_roofs(const std::string& w);
std::vector<std::string> scale_roofs(const std::string& w);

}  // namespace posenc::bench
