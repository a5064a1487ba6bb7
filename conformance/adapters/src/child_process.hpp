#pragma once
// The suite's side of a plugin child: one forked process per plugin, started on first use and
// kept across calls, so the library is loaded once rather than once per case. Each call is sent
// over a socket and waited for within the timeout. After anything that may have left the child
// in a bad state (a crash, an exit, a hang past the timeout, output on stdout/stderr, a reply
// the suite cannot read, a damaged buffer or an unknown status) the child is killed and reaped,
// and the next call starts a new one: a failure is charged to the call that caused it, never to
// the next. The child's stdout and stderr go to a memory file checked after every call; past
// 1 MiB the child is stopped (RLIMIT_FSIZE, SIGXFSZ).
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <span>
#include <vector>
#include <string>

#include "plugin_protocol.hpp"

namespace posenc::conformance {

class ChildProcess {
 public:
  ChildProcess(std::string path, double timeout_seconds, std::size_t memory_budget);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  struct Failure {
    std::string what;      // "crashed with signal 11 (...)", "cannot load: ...", ...
    bool refused = false;  // the library was loaded but refused in its greeting (what is its message)
  };
  // Starts a child unless one runs; nothing when it runs with the library loaded.
  std::optional<Failure> start();
  // The running child's greeting (valid after a successful start()).
  const Greeting& greeting() const { return greeting_; }

  // The calls in order (the formats of one case), one result each, every call within the
  // timeout. A call that fails ends the child, and the calls after it go to a new one.
  std::vector<CallResult> call(std::span<const Request* const> batch);

 private:
  using Clock = std::chrono::steady_clock;
  // How a call (or the start) ended for the suite: the child closed its end, the deadline
  // passed, it answered but printed, it answered garbage, or the suite itself is done with it.
  enum class End { closed, timed_out, printed, garbled, clean };
  // Reaps the child, killing it first unless it ended by itself (End::closed, waited for until
  // the deadline); says what happened, with the start of anything it printed ("" for End::clean).
  // `printed`: for End::printed, the bytes the failing call printed (the file may hold more, from
  // the calls the child went on with).
  std::string stop(End how, Clock::time_point deadline, off_t printed = 0);
  // The reply to the next call of a batch whose sending ended with `sent`; the child stopped
  // (pid_ < 0) when the call failed in a way that may have harmed it.
  // `last`: no call follows in the batch, so whatever the memory file holds is this call's.
  CallResult next_reply(Transfer sent, Clock::time_point deadline, bool last);
  Clock::time_point deadline() const;
  void close_fds();

  std::string path_;
  double timeout_seconds_;
  std::size_t memory_budget_;
  pid_t pid_ = -1;
  int socket_ = -1;   // the suite's end
  int printed_ = -1;  // the memory file holding the child's stdout and stderr
  Greeting greeting_;
};

}  // namespace posenc::conformance
