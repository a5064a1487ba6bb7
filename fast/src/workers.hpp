#pragma once
// The fast path's worker threads: started once, on the first call that asks for more threads
// than have been started, and kept for the process's life, so that a call pays a wake-up, not a
// thread's creation (starting and joining a std::thread per call costs ~100 us, more than 64
// tokens x 40 heads take on one thread; bench: fused/decode/64/f32/half/out/2). Idle workers
// poll for ~100 us before they sleep (workers.cpp, kPoll); the work is shared, so that a call
// does not wait on a late one (SharedRanges).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "posenc/errors.hpp"

namespace posenc::fast::detail {

// part(i) for i in [0, parts), parts that share one pool of work, each taking what is left until
// nothing is (SharedRanges): part(0) on the calling thread, the others on workers. Once part(0)
// has returned no work is left to take, so the parts no worker has started by then are withdrawn,
// not run: a call does not wait for a sleeping worker to wake (tens of microseconds on a VM) only
// to find nothing left. Returns when every started part has returned; the first exception a part
// throws is rethrown here, after that. Calls from several threads at once share the workers. A
// child made by fork() starts its own workers when it needs them (its parent's are not in it).
void run_sharing(int parts, const std::function<void(int)>& part);

// How many workers this process has started (a test's view: they are never stopped).
int workers_started();

// [0, n) shared by `parts` threads (run_sharing). Part i owns a contiguous range, the i-th of
// `parts` near-equal ones, and takes pieces from its front, half of what is left each time (a
// multiple of `unit`, at least one); with its own range empty, it takes pieces likewise from the
// back of the range with the most left. Threads that start together each rotate their own range,
// as a fixed split would; one that starts late (a worker's wake-up) finds part of its range taken
// by the others, so that no thread waits long for another's last piece.
class SharedRanges {
 public:
  SharedRanges(std::int64_t n, int parts, std::int64_t unit);
  // The next piece [begin, end) for part i; false when nothing is left anywhere.
  bool next(int i, std::int64_t& begin, std::int64_t& end);

 private:
  struct Range {
    std::int64_t front, back;  // what is left: [front, back)
  };
  std::int64_t piece(std::int64_t left) const;
  std::mutex mutex_;
  std::vector<Range> ranges_;
  std::int64_t unit_;
};

// [0, n) on `threads` threads, the calling one and the kept workers, which share it in pieces of
// whole units (SharedRanges): thread_work(next) runs once on each thread, next(begin, end) giving
// its pieces until it returns false. (RoPE's tokens, attention's work items: every result is
// independent of the split.)
template <class F>
void share_pieces(std::int64_t n, int threads, std::int64_t unit, F thread_work) {
  if (threads < 1) throw InvalidParameter("threads", std::to_string(threads), ">= 1");
  const int parts = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(n, 1)));
  if (parts == 1) {
    bool given = false;
    return thread_work([&](std::int64_t& begin, std::int64_t& end) {
      begin = 0;
      end = n;
      return !std::exchange(given, true);
    });
  }
  SharedRanges ranges(n, parts, unit);
  run_sharing(parts, [&](int i) {
    thread_work([&](std::int64_t& begin, std::int64_t& end) { return ranges.next(i, begin, end); });
  });
}

}  // namespace posenc::fast::detail
