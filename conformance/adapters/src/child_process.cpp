#include "child_process.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "plugin_call.hpp"
#include "posenc/errors.hpp"

namespace posenc::conformance {
namespace {

// What a plugin may print before it is stopped (SIGXFSZ); anything printed fails the call.
constexpr std::size_t kPrintLimit = std::size_t{1} << 20;

off_t printed_size(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? st.st_size : 0;
}

// The start of what the child printed, for the failure message (an ASan report, a plugin's own
// error text).
std::string printed_text(int fd, off_t size) {
  std::string text(static_cast<std::size_t>(std::min<off_t>(size, 120)), '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  for (char& ch : text) {
    if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    if (static_cast<unsigned char>(ch) < 32 || static_cast<unsigned char>(ch) > 126) ch = '?';
  }
  return text;
}

// Waits until the deadline for a child that closed its end to finish exiting.
bool reaped_by(pid_t pid, std::chrono::steady_clock::time_point deadline, int& status) {
  while (true) {
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The forked child's setup before it serves: its output to the memory file under the print
// limit, faults ending it by their signal, and its end tied to the suite's.
[[noreturn]] void become_child(pid_t suite, int printed, int socket, const std::string& path, std::size_t budget) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != suite) _exit(0);  // the suite ended before prctl took effect
  dup2(printed, STDOUT_FILENO);
  dup2(printed, STDERR_FILENO);
  const rlimit print_limit{kPrintLimit, kPrintLimit};
  setrlimit(RLIMIT_FSIZE, &print_limit);
  signal(SIGXFSZ, SIG_DFL);
  // A fault must end the child by its signal, also where a sanitizer's handler is installed.
  signal(SIGSEGV, SIG_DFL);
  signal(SIGBUS, SIG_DFL);
  serve(path, socket, budget);
}

}  // namespace

ChildProcess::ChildProcess(std::string path, double timeout_seconds, std::size_t memory_budget)
    : path_(std::move(path)), timeout_seconds_(timeout_seconds), memory_budget_(memory_budget) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) stop(End::clean, Clock::now());
}

std::optional<ChildProcess::Failure> ChildProcess::start() {
  if (pid_ > 0) return std::nullopt;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw Error("posenc: socketpair failed");
  printed_ = memfd_create("posenc-plugin-output", MFD_CLOEXEC);
  if (printed_ < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error("posenc: memfd_create failed");
  }
  std::fflush(nullptr);  // nothing buffered in the suite may be written twice
  const pid_t suite = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    close(fds[0]);
    close(fds[1]);
    close(printed_);
    throw Error("posenc: fork failed");
  }
  if (pid_ == 0) {
    close(fds[0]);
    become_child(suite, printed_, fds[1], path_, memory_budget_);
  }
  close(fds[1]);
  socket_ = fds[0];
  const auto until = deadline();
  std::string message;
  const Transfer t = receive_message(socket_, message, until);
  std::optional<Greeting> greeting = t == Transfer::done ? decode_greeting(message) : std::nullopt;
  if (t == Transfer::closed) return Failure{stop(End::closed, until)};
  if (t == Transfer::timed_out) return Failure{stop(End::timed_out, until)};
  if (!greeting) return Failure{stop(End::garbled, until)};
  if (printed_size(printed_) > 0) return Failure{stop(End::printed, until, printed_size(printed_))};
  if (!greeting->ok) {
    stop(End::clean, until);
    return Failure{greeting->message, true};
  }
  greeting_ = std::move(*greeting);
  return std::nullopt;
}

std::vector<CallResult> ChildProcess::call(std::span<const Request* const> batch) {
  std::vector<CallResult> results;
  while (results.size() < batch.size()) {
    if (const auto failure = start()) {
      results.push_back({{}, failure->what});
      continue;
    }
    const auto rest = batch.subspan(results.size());
    auto until = deadline();
    const Transfer sent = send_message(socket_, encode(rest), until);
    for (std::size_t i = 0; i < rest.size() && pid_ > 0; ++i) {
      results.push_back(next_reply(sent, until, i + 1 == rest.size()));
      until = deadline();
    }
  }
  return results;
}

CallResult ChildProcess::next_reply(Transfer sent, Clock::time_point until, bool last) {
  Transfer t = sent;
  std::string message;
  if (t == Transfer::done) t = receive_message(socket_, message, until);
  if (t == Transfer::closed) return {{}, stop(End::closed, until)};
  if (t == Transfer::timed_out) return {{}, stop(End::timed_out, until)};
  std::optional<Reply> reply = t == Transfer::done ? decode_reply(message) : std::nullopt;
  if (!reply) return {{}, stop(End::garbled, until)};
  const auto printed = static_cast<off_t>(reply->printed);
  if (printed > 0) return {{}, stop(End::printed, until, printed)};
  // The child's own count is not all there is: a plugin that damaged the child could have it
  // wrong, so after a batch's last call the file itself is checked too.
  if (last && printed_size(printed_) > 0) return {{}, stop(End::printed, until, printed_size(printed_))};
  // The call failed by its reply; what it may have done to the child's memory is not inherited.
  const bool known_status = reply->status >= POSENC_OK && reply->status <= POSENC_UNSUPPORTED;
  if (!reply->damage.empty() || !known_status) stop(End::clean, until);
  return {std::move(*reply), {}};
}

ChildProcess::Clock::time_point ChildProcess::deadline() const {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds_));
}

std::string ChildProcess::stop(End how, Clock::time_point deadline, off_t printed) {
  int status = 0;
  const bool timed_out = how == End::timed_out || (how == End::closed && !reaped_by(pid_, deadline, status));
  const bool killed = how != End::closed || timed_out;  // its status is then our SIGKILL, not its own end
  if (killed) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }
  const off_t printed_bytes = how == End::printed ? std::min(printed, printed_size(printed_)) : printed_size(printed_);
  const std::string printed_start = printed_bytes > 0 ? printed_text(printed_, printed_bytes) : "";
  close_fds();
  pid_ = -1;
  if (how == End::clean) return {};
  std::string why;
  if (timed_out) {
    why = "did not return within " + std::to_string(timeout_seconds_) + " s";
  } else if (how == End::garbled) {
    why = "answered with a message the suite cannot read";
  } else if (!killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) {
    why = "printed more than " + std::to_string(kPrintLimit) + " bytes to stdout/stderr and was stopped";
  } else if (!killed && WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    why = std::string("crashed with signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")" +
          (sig == SIGSEGV || sig == SIGBUS ? ": possibly an access outside the buffers it was given" : "");
  } else if (!killed && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    why = "exited with status " + std::to_string(WEXITSTATUS(status)) + " in the middle of a call";
  } else if (printed_bytes > 0) {
    why = "printed " + std::to_string(printed_bytes) +
          " bytes to stdout/stderr (a plugin must not print: it would corrupt its host's output)";
  } else {
    why = "ended without answering";  // exit(0) in the middle of a call
  }
  if (printed_bytes > 0) why += "; it printed: \"" + printed_start + (printed_bytes > 120 ? "...\"" : "\"");
  return why;
}

void ChildProcess::close_fds() {
  for (int* fd : {&socket_, &printed_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

}  // namespace posenc::conformance
