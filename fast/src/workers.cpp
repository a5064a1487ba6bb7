#include "workers.hpp"

#include <immintrin.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace posenc::fast::detail {
namespace {

// How long a worker with nothing to do, and a caller waiting for its workers, poll before
// they sleep: a sleeping thread's wake-up is a futex call and, on a VM, the hypervisor waking
// an idle virtual CPU (tens of microseconds). OpenMP runtimes poll likewise (libgomp's
// OMP_WAIT_POLICY, GOMP_SPINCOUNT). Calls that follow each other closely (a prefill's layers,
// a benchmark) then find their workers awake; a worker left idle sleeps after this long.
constexpr auto kPoll = std::chrono::microseconds(100);

// Polls ready() with pause instructions for up to kPoll; whether it turned true.
template <class Ready>
bool poll(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kPoll;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      _mm_pause();
    }
    if (std::chrono::steady_clock::now() > until) return false;
  }
}

// One run_sharing call: its parts not yet finished and the first exception of one.
struct Job {
  const std::function<void(int)>& part;
  std::atomic<int> left;  // parts on workers not finished nor withdrawn (a worker's decremented under mutex)
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable finished;
};

class Workers {
 public:
  void run(int parts, const std::function<void(int)>& part) {
    Job job{part, parts - 1, nullptr, {}, {}};
    {
      const std::lock_guard lock(mutex_);
      while (started_ < parts - 1) {
        std::thread([this] { serve(); }).detach();
        ++started_;
      }
      for (int i = 1; i < parts; ++i) tasks_.push_back({&job, i});
      queued_.store(static_cast<int>(tasks_.size()), std::memory_order_release);
    }
    // One sleeping worker per task, not all: a pool once grown by a call on more threads would
    // otherwise wake whole at every call.
    for (int i = 1; i < parts; ++i) wake_.notify_one();
    std::exception_ptr own;
    try {
      part(0);
    } catch (...) {
      own = std::current_exception();
    }
    withdraw_unstarted(job);
    // The workers hold references into job until they report: wait for all before returning,
    // and take the job's mutex even when polling saw them done, so that the last one has let go
    // of it.
    poll([&] { return job.left.load(std::memory_order_acquire) == 0; });
    std::unique_lock lock(job.mutex);
    job.finished.wait(lock, [&] { return job.left.load(std::memory_order_relaxed) == 0; });
    if (own) std::rethrow_exception(own);
    if (job.error) std::rethrow_exception(job.error);
  }

  int started() {
    const std::lock_guard lock(mutex_);
    return started_;
  }

 private:
  struct Task {
    Job* job;
    int index;
  };

  // The job's tasks no worker has taken yet, taken off the queue (run_sharing): they count as
  // finished.
  void withdraw_unstarted(Job& job) {
    const std::lock_guard lock(mutex_);
    const auto withdrawn = std::erase_if(tasks_, [&](const Task& t) { return t.job == &job; });
    queued_.store(static_cast<int>(tasks_.size()), std::memory_order_relaxed);
    if (withdrawn) job.left.fetch_sub(static_cast<int>(withdrawn), std::memory_order_release);
  }

  [[noreturn]] void serve() {
    for (;;) {
      Task t;
      poll([&] { return queued_.load(std::memory_order_acquire) > 0; });
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return !tasks_.empty(); });
        t = tasks_.front();
        tasks_.pop_front();
        queued_.store(static_cast<int>(tasks_.size()), std::memory_order_relaxed);
      }
      std::exception_ptr error;
      try {
        t.job->part(t.index);
      } catch (...) {
        error = std::current_exception();
      }
      // Reported under the job's mutex, which the caller takes to see left == 0: the job is
      // not destroyed before this unlocks.
      const std::lock_guard lock(t.job->mutex);
      if (error && !t.job->error) t.job->error = error;
      if (t.job->left.fetch_sub(1, std::memory_order_release) == 1) t.job->finished.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  std::atomic<int> queued_{0};  // tasks_.size(), for polling without the mutex
  int started_ = 0;
};

// Never destroyed: its threads wait on its members until the process ends (a destructor at
// exit would destroy them under the waiting threads). A forked child, which has none of the
// threads, gets a new one (the old one is left as it is: its mutex may have been held by a
// thread that is not in the child).
Workers* workers = nullptr;
std::once_flag workers_once;

void new_workers_in_child() { workers = new Workers; }

void start_workers_once() {
  std::call_once(workers_once, [] {
    workers = new Workers;
    pthread_atfork(nullptr, nullptr, new_workers_in_child);
  });
}

}  // namespace

SharedRanges::SharedRanges(std::int64_t n, int parts, std::int64_t unit) : unit_(unit) {
  ranges_.reserve(static_cast<std::size_t>(parts));
  for (int i = 0; i < parts; ++i) ranges_.push_back({n * i / parts, n * (i + 1) / parts});
}

std::int64_t SharedRanges::piece(std::int64_t left) const {
  const std::int64_t half = (left / 2 + unit_ - 1) / unit_ * unit_;
  return std::min(left, std::max(unit_, half));
}

bool SharedRanges::next(int i, std::int64_t& begin, std::int64_t& end) {
  const std::lock_guard lock(mutex_);
  Range& own = ranges_[static_cast<std::size_t>(i)];
  if (own.front < own.back) {
    begin = own.front;
    end = own.front += piece(own.back - own.front);
    return true;
  }
  Range* most = &own;
  for (Range& r : ranges_) {
    if (r.back - r.front > most->back - most->front) most = &r;
  }
  if (most->front == most->back) return false;
  end = most->back;
  begin = most->back -= piece(most->back - most->front);
  return true;
}

void run_sharing(int parts, const std::function<void(int)>& part) {
  if (parts <= 1) return part(0);
  start_workers_once();
  workers->run(parts, part);
}

int workers_started() {
  start_workers_once();
  return workers->started();
}

}  // namespace posenc::fast::detail
