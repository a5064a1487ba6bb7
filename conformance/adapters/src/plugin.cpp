#include "posenc/adapters/plugin.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "guarded_buffer.hpp"
#include "posenc/plugin.h"
#include "posenc/reference/rounding.hpp"

namespace posenc::conformance {
namespace {

// ---- Child side: load the library, make the calls, serialize the outcomes. ----

struct Entry {
  using Query = const posenc_plugin_info* (*)();
  using RopeApply = posenc_status (*)(const posenc_rope_params*, posenc_dtype, int64_t, int64_t, const int64_t*,
                                      const void*, int64_t, int64_t, void*, int64_t, int64_t);
  using RopeTable = posenc_status (*)(const posenc_rope_params*, posenc_dtype, int64_t, const int64_t*, void*);
  using RopeFrequencies = posenc_status (*)(const posenc_rope_params*, double*, double*);
  using SinTable = posenc_status (*)(const posenc_sinusoidal_params*, posenc_dtype, int64_t, const int64_t*, void*);
  using SinEmbed = posenc_status (*)(const posenc_sinusoidal_params*, posenc_dtype, int64_t, const int64_t*,
                                     const void*, void*);
  using AlibiSlopes = posenc_status (*)(const posenc_alibi_params*, posenc_dtype, void*);
  using AlibiBias = posenc_status (*)(const posenc_alibi_params*, posenc_dtype, int64_t, const int64_t*, int64_t,
                                      const int64_t*, void*);
  using Learned = posenc_status (*)(int64_t, int64_t, posenc_dtype, const void*, int64_t, const int64_t*, void*);
};

std::size_t element_size(Format f) { return static_cast<std::size_t>(spec(f).width) / 8; }

// Stores doubles in format f; nothing if some value is not exactly representable there.
bool store(const std::vector<double>& values, Format f, void* out) {
  auto* bytes = static_cast<unsigned char*>(out);
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto bits = exact_bits(f, values[i]);
    if (!bits) return false;
    std::memcpy(bytes + i * element_size(f), &*bits, element_size(f));  // little-endian
  }
  return true;
}

std::vector<double> load(const void* in, std::size_t n, Format f) {
  std::vector<double> out(n);
  const auto* bytes = static_cast<const unsigned char*>(in);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes + i * element_size(f), element_size(f));
    out[i] = to_double(f, bits);
  }
  return out;
}

// Correct rounding of a value the suite formed itself (a dot product of the plugin's outputs).
double round_to(Format f, long double v) {
  return to_double(f, ref::round_to_format(ref::MpfrReal<60>(v), f));
}

posenc_rope_params to_abi(const RopeParams& p) {
  posenc_rope_params a{};
  a.head_dim = p.head_dim;
  a.rotary_dim = p.rotary_dim;
  a.base = p.base;
  a.layout = p.layout == RopeLayout::half;
  a.partial = p.partial == PartialRotary::proportional;
  a.inverse = p.inverse;
  a.n_axes = static_cast<int32_t>(p.position_axes());
  for (std::size_t i = 0; i < p.mrope_section.size() && i < 4; ++i) a.mrope_section[i] = p.mrope_section[i];
  const RopeScaling& s = p.scaling;
  posenc_rope_scaling& t = a.scaling;
  t.kind = static_cast<int32_t>(s.kind);
  auto real = [&](const std::optional<double>& v, double& field, uint32_t bit) {
    if (v) {
      field = *v;
      t.fields |= bit;
    }
  };
  auto integer = [&](const std::optional<std::int64_t>& v, int64_t& field, uint32_t bit) {
    if (v) {
      field = *v;
      t.fields |= bit;
    }
  };
  real(s.factor, t.factor, POSENC_FIELD_FACTOR);
  integer(s.original_max_positions, t.original_max_positions, POSENC_FIELD_ORIGINAL_MAX_POSITIONS);
  integer(s.seq_len, t.seq_len, POSENC_FIELD_SEQ_LEN);
  real(s.beta_fast, t.beta_fast, POSENC_FIELD_BETA_FAST);
  real(s.beta_slow, t.beta_slow, POSENC_FIELD_BETA_SLOW);
  if (s.truncate) {
    t.truncate = *s.truncate;
    t.fields |= POSENC_FIELD_TRUNCATE;
  }
  real(s.mscale, t.mscale, POSENC_FIELD_MSCALE);
  real(s.mscale_all_dim, t.mscale_all_dim, POSENC_FIELD_MSCALE_ALL_DIM);
  real(s.attention_factor, t.attention_factor, POSENC_FIELD_ATTENTION_FACTOR);
  real(s.low_freq_factor, t.low_freq_factor, POSENC_FIELD_LOW_FREQ_FACTOR);
  real(s.high_freq_factor, t.high_freq_factor, POSENC_FIELD_HIGH_FREQ_FACTOR);
  t.n_short_factor = static_cast<int64_t>(s.short_factor.size());
  t.n_long_factor = static_cast<int64_t>(s.long_factor.size());
  t.short_factor = s.short_factor.empty() ? nullptr : s.short_factor.data();
  t.long_factor = s.long_factor.empty() ? nullptr : s.long_factor.data();
  return a;
}

posenc_sinusoidal_params to_abi(const SinusoidalParams& p) {
  return {p.d_model, p.base, p.layout == SinusoidalLayout::concatenated,
          p.frequencies == SinusoidalFrequencies::tensor2tensor};
}

posenc_alibi_params to_abi(const AlibiParams& p) { return {p.n_heads, p.mode == AlibiMode::symmetric}; }

// One call's buffers: guarded inputs copied in and checked unchanged afterwards, guarded outputs
// pre-filled with NaN so that an output never written fails the comparison.
class Call {
 public:
  void* input(const std::vector<double>& values, Format f, bool& representable) {
    GuardedBuffer& b = add(values.size() * element_size(f));
    representable = representable && store(values, f, b.data());
    return snapshot(b);
  }
  const int64_t* positions(const std::vector<std::int64_t>& values) {
    GuardedBuffer& b = add(values.size() * 8);
    if (!values.empty()) std::memcpy(b.data(), values.data(), values.size() * 8);
    return static_cast<const int64_t*>(snapshot(b));
  }
  void* output(std::size_t n, Format f) {
    GuardedBuffer& b = add(n * element_size(f));
    // All-ones bytes are a NaN in every format: an output never written fails the comparison.
    std::memset(b.data(), 0xff, b.bytes());
    outputs_.push_back(&b);
    return b.data();
  }
  // Empty when every buffer is as it should be, else what went wrong.
  std::string damage() const {
    for (const auto& [buffer, copy] : inputs_) {
      if (std::memcmp(buffer->data(), copy.data(), copy.size()) != 0) return "modified its input";
      if (!buffer->slack_intact()) return "wrote before the start of an input buffer";
    }
    for (const auto* buffer : outputs_) {
      if (!buffer->slack_intact()) return "wrote before the start of its output buffer";
    }
    return {};
  }

 private:
  GuardedBuffer& add(std::size_t bytes) {
    return *buffers_.emplace_back(std::make_unique<GuardedBuffer>(std::max<std::size_t>(bytes, 1)));
  }
  // Remembers an input's bytes so that damage() can tell whether the call changed them.
  void* snapshot(GuardedBuffer& b) {
    const auto* bytes = static_cast<const unsigned char*>(b.data());
    inputs_.push_back({&b, std::vector<unsigned char>(bytes, bytes + b.bytes())});
    return b.data();
  }
  std::vector<std::unique_ptr<GuardedBuffer>> buffers_;
  std::vector<std::pair<GuardedBuffer*, std::vector<unsigned char>>> inputs_;
  std::vector<GuardedBuffer*> outputs_;
};

Outcome from_status(int status, std::vector<double> values, const Call& call, const char* entry) {
  Outcome o;
  const std::string damage = call.damage();
  if (!damage.empty()) return {Status::failed, {}, std::string(entry) + " " + damage};
  switch (status) {
    case POSENC_OK:
      o.status = Status::ok;
      o.values = std::move(values);
      return o;
    case POSENC_INVALID_PARAMETERS:
      return {Status::invalid, {}, std::string(entry) + " refused the parameters"};
    case POSENC_UNSUPPORTED:
      return {Status::unsupported, {}, std::string(entry) + " does not support this case"};
    default:
      return {Status::failed, {}, std::string(entry) + " returned an unknown status " + std::to_string(status)};
  }
}

template <class F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

Outcome unsupported(const std::string& why) { return {Status::unsupported, {}, why}; }

// The ABI passes no lengths for x or positions (the parameters imply them), so a case whose
// inputs have the wrong length cannot be put to a plugin.
bool expressible(const VectorGroup& g, const VectorCase& c) {
  if (const auto* p = std::get_if<RopeParams>(&g.params)) {
    const auto axes = static_cast<std::size_t>(std::max<std::int64_t>(p->position_axes(), 1));
    const bool rotate = g.type == CaseType::rope_rotate || g.type == CaseType::rope_dot;
    return (!rotate || c.x.size() == static_cast<std::size_t>(std::max<std::int64_t>(p->head_dim, 0))) &&
           (g.type == CaseType::rope_frequencies || c.position.size() == axes);
  }
  if (const auto* p = std::get_if<SinusoidalParams>(&g.params)) {
    return g.type != CaseType::sinusoidal_embed || c.x.size() == static_cast<std::size_t>(std::max<std::int64_t>(p->d_model, 0));
  }
  if (const auto* p = std::get_if<LearnedParams>(&g.params)) {
    return p->max_positions < 0 || p->dim < 0 || g.table.size() == static_cast<std::size_t>(p->max_positions * p->dim);
  }
  return true;
}

// Runs one case in one format against the loaded library.
Outcome call_plugin(void* lib, const VectorGroup& g, const VectorCase& c, Format f) {
  if (!expressible(g, c)) return {Status::unsupported, {}, "inputs of the wrong length cannot be passed through the ABI"};
  const auto dtype = static_cast<posenc_dtype>(f);
  Call call;
  bool representable = true;
  const auto not_representable = unsupported("inputs not representable in " + std::string(to_string(f)));
  switch (g.type) {
    case CaseType::rope_rotate:
    case CaseType::rope_dot: {
      auto fn = symbol<Entry::RopeApply>(lib, "posenc_rope_apply");
      if (!fn) return unsupported("no posenc_rope_apply");
      const auto p = to_abi(std::get<RopeParams>(g.params));
      const bool dot = g.type == CaseType::rope_dot;
      const auto n = static_cast<int64_t>(c.x.size());
      std::vector<double> x = c.x;
      std::vector<std::int64_t> pos = c.position;
      if (dot) {
        x.insert(x.end(), c.y.begin(), c.y.end());
        pos.insert(pos.end(), c.position_b.begin(), c.position_b.end());
      }
      const int64_t tokens = dot ? 2 : 1;
      void* in = call.input(x, f, representable);
      if (!representable) return not_representable;
      const int64_t* positions = call.positions(pos);
      void* out = call.output(x.size(), f);
      const int status = fn(&p, dtype, tokens, 1, positions, in, n, n, out, n, n);
      std::vector<double> y = status == POSENC_OK ? load(out, x.size(), f) : std::vector<double>{};
      if (dot && status == POSENC_OK) {
        long double sum = 0;
        for (std::size_t i = 0; i < c.x.size(); ++i) sum += static_cast<long double>(y[i]) * y[c.x.size() + i];
        y = {round_to(f, sum)};
      }
      Outcome o = from_status(status, std::move(y), call, "posenc_rope_apply");
      o.derived = dot;
      return o;
    }
    case CaseType::rope_table: {
      auto fn = symbol<Entry::RopeTable>(lib, "posenc_rope_table");
      if (!fn) return unsupported("no posenc_rope_table");
      const auto& rp = std::get<RopeParams>(g.params);
      const auto p = to_abi(rp);
      const std::size_t n = 2 * static_cast<std::size_t>(std::max<std::int64_t>(rp.pair_count(), 0));
      void* out = call.output(n, f);
      const int status = fn(&p, dtype, 1, call.positions(c.position), out);
      return from_status(status, status == POSENC_OK ? load(out, n, f) : std::vector<double>{}, call,
                         "posenc_rope_table");
    }
    case CaseType::rope_frequencies: {
      auto fn = symbol<Entry::RopeFrequencies>(lib, "posenc_rope_frequencies");
      if (!fn) return unsupported("no posenc_rope_frequencies");
      const auto& rp = std::get<RopeParams>(g.params);
      const auto p = to_abi(rp);
      const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(rp.pair_count(), 0));
      auto* inv = static_cast<double*>(call.output(n, Format::f64));
      auto* attention = static_cast<double*>(call.output(1, Format::f64));
      const int status = fn(&p, inv, attention);
      std::vector<double> y;
      if (status == POSENC_OK) {
        for (std::size_t i = 0; i < n; ++i) y.push_back(round_to(f, inv[i]));
        y.push_back(round_to(f, *attention));
      }
      return from_status(status, std::move(y), call, "posenc_rope_frequencies");
    }
    case CaseType::sinusoidal_row:
    case CaseType::sinusoidal_dot: {
      auto fn = symbol<Entry::SinTable>(lib, "posenc_sinusoidal_table");
      if (!fn) return unsupported("no posenc_sinusoidal_table");
      const auto& sp = std::get<SinusoidalParams>(g.params);
      const auto p = to_abi(sp);
      const bool dot = g.type == CaseType::sinusoidal_dot;
      std::vector<std::int64_t> pos = c.position;
      if (dot) pos.push_back(c.position_b.at(0));
      const auto d = static_cast<std::size_t>(std::max<std::int64_t>(sp.d_model, 0));
      void* out = call.output(d * pos.size(), f);
      const int status = fn(&p, dtype, static_cast<int64_t>(pos.size()), call.positions(pos), out);
      std::vector<double> y = status == POSENC_OK ? load(out, d * pos.size(), f) : std::vector<double>{};
      if (dot && status == POSENC_OK) {
        long double sum = 0;
        for (std::size_t j = 0; j < d; ++j) sum += static_cast<long double>(y[j]) * y[d + j];
        y = {round_to(f, sum)};
      }
      Outcome o = from_status(status, std::move(y), call, "posenc_sinusoidal_table");
      o.derived = dot;
      return o;
    }
    case CaseType::sinusoidal_embed: {
      auto fn = symbol<Entry::SinEmbed>(lib, "posenc_sinusoidal_embed");
      if (!fn) return unsupported("no posenc_sinusoidal_embed");
      const auto p = to_abi(std::get<SinusoidalParams>(g.params));
      void* in = call.input(c.x, f, representable);
      if (!representable) return not_representable;
      void* out = call.output(c.x.size(), f);
      const int status = fn(&p, dtype, 1, call.positions(c.position), in, out);
      return from_status(status, status == POSENC_OK ? load(out, c.x.size(), f) : std::vector<double>{}, call,
                         "posenc_sinusoidal_embed");
    }
    case CaseType::alibi_slopes: {
      auto fn = symbol<Entry::AlibiSlopes>(lib, "posenc_alibi_slopes");
      if (!fn) return unsupported("no posenc_alibi_slopes");
      const auto& ap = std::get<AlibiParams>(g.params);
      const auto p = to_abi(ap);
      const auto n = static_cast<std::size_t>(std::max<std::int64_t>(ap.n_heads, 0));
      void* out = call.output(n, f);
      const int status = fn(&p, dtype, out);
      return from_status(status, status == POSENC_OK ? load(out, n, f) : std::vector<double>{}, call,
                         "posenc_alibi_slopes");
    }
    case CaseType::alibi_bias: {
      auto fn = symbol<Entry::AlibiBias>(lib, "posenc_alibi_bias");
      if (!fn) return unsupported("no posenc_alibi_bias");
      const auto& ap = std::get<AlibiParams>(g.params);
      // The ABI computes every head; a head index is the suite's own choice, not the plugin's.
      if (c.head < 0 || c.head >= ap.n_heads) return unsupported("the ABI takes no head index");
      const auto p = to_abi(ap);
      const auto n = static_cast<std::size_t>(ap.n_heads);
      void* out = call.output(n, f);
      const int status = fn(&p, dtype, 1, call.positions({c.query}), 1, call.positions({c.key}), out);
      std::vector<double> y;
      if (status == POSENC_OK) y = {load(out, n, f)[static_cast<std::size_t>(c.head)]};
      return from_status(status, std::move(y), call, "posenc_alibi_bias");
    }
    case CaseType::learned_lookup: {
      auto fn = symbol<Entry::Learned>(lib, "posenc_learned_lookup");
      if (!fn) return unsupported("no posenc_learned_lookup");
      const auto& lp = std::get<LearnedParams>(g.params);
      void* table = call.input(g.table, f, representable);
      if (!representable) return not_representable;
      const auto n = static_cast<std::size_t>(std::max<std::int64_t>(lp.dim, 0));
      void* out = call.output(n, f);
      const int status = fn(lp.max_positions, lp.dim, dtype, table, 1, call.positions(c.position), out);
      return from_status(status, status == POSENC_OK ? load(out, n, f) : std::vector<double>{}, call,
                         "posenc_learned_lookup");
    }
  }
  return unsupported("unknown case type");
}

// ---- Pipe protocol between the child and the parent. ----

void write_all(int fd, const void* data, std::size_t n) {
  if (n == 0) return;
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) _exit(3);
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void send(int fd, const Outcome& o) {
  const auto status = static_cast<std::int32_t>(o.status) | (o.derived ? 0x100 : 0);
  const auto length = static_cast<std::uint32_t>(o.message.size());
  const auto count = static_cast<std::uint64_t>(o.values.size());
  write_all(fd, &status, sizeof status);
  write_all(fd, &length, sizeof length);
  write_all(fd, o.message.data(), o.message.size());
  write_all(fd, &count, sizeof count);
  write_all(fd, o.values.data(), o.values.size() * sizeof(double));
}

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  bool get(T& v) {
    if (at_ + sizeof v > bytes_.size()) return false;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  bool get_bytes(void* out, std::size_t n) {
    if (at_ + n > bytes_.size()) return false;
    if (n == 0) return true;  // out may be the null data() of an empty vector
    std::memcpy(out, bytes_.data() + at_, n);
    at_ += n;
    return true;
  }

 private:
  const std::string& bytes_;
  std::size_t at_ = 0;
};

struct ChildResult {
  std::string bytes;
  std::string failure;  // empty when the child exited normally
};

// What a plugin may print before it is stopped (SIGXFSZ); anything printed fails the call.
constexpr std::size_t kPrintLimit = std::size_t{1} << 20;

// Caps the child's address space at what it maps now plus `budget` bytes, so a plugin that
// allocates without bound fails its call instead of exhausting the machine.
void limit_address_space(std::size_t budget) {
  std::size_t pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%zu", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  const auto now = pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (pages == 0 || now > std::numeric_limits<rlim_t>::max() - budget) return;
  const rlimit limit{now + budget, now + budget};
  setrlimit(RLIMIT_AS, &limit);
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

// Forks, runs `work(fd)` in the child, collects what it writes within the timeout.
template <class Work>
ChildResult in_child(double timeout_seconds, std::size_t memory_budget, Work work) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("posenc: pipe failed");
  // The plugin's stdout and stderr: a memory file the parent measures after the call.
  const int printed = memfd_create("posenc-plugin-output", MFD_CLOEXEC);
  if (printed < 0) throw Error("posenc: memfd_create failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("posenc: fork failed");
  if (pid == 0) {
    close(fds[0]);
    dup2(printed, STDOUT_FILENO);
    dup2(printed, STDERR_FILENO);
    const rlimit print_limit{kPrintLimit, kPrintLimit};
    setrlimit(RLIMIT_FSIZE, &print_limit);
    signal(SIGXFSZ, SIG_DFL);
    // A fault must end the child by its signal, also where a sanitizer's handler is installed.
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    limit_address_space(memory_budget);
    work(fds[1]);
    std::fflush(nullptr);
    _exit(0);
  }
  close(fds[1]);
  ChildResult r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  char chunk[1 << 16];
  bool timed_out = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready == 0) continue;
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;
    r.bytes.append(chunk, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  struct stat printed_stat {};
  const off_t printed_bytes = fstat(printed, &printed_stat) == 0 ? printed_stat.st_size : 0;
  const std::string printed_start = printed_bytes > 0 ? printed_text(printed, printed_bytes) : "";
  close(printed);
  if (timed_out) {
    r.failure = "did not return within " + std::to_string(timeout_seconds) + " s";
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) {
    r.failure = "printed more than " + std::to_string(kPrintLimit) + " bytes to stdout/stderr and was stopped";
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    r.failure = std::string("crashed with signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                (sig == SIGSEGV || sig == SIGBUS ? ": possibly an access outside the buffers it was given" : "");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    r.failure = "exited with status " + std::to_string(WEXITSTATUS(status)) + " in the middle of a call";
  } else if (printed_bytes > 0) {
    r.failure = "printed " + std::to_string(printed_bytes) +
                " bytes to stdout/stderr (a plugin must not print: it would corrupt its host's output)";
  }
  if (printed_bytes > 0) r.failure += "; it printed: \"" + printed_start + (printed_bytes > 120 ? "...\"" : "\"");
  return r;
}

void* open_library(const std::string& path) { return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); }

}  // namespace

PluginImplementation::PluginImplementation(std::string path, double timeout_seconds, std::size_t memory_limit_mib)
    : path_(std::move(path)), timeout_seconds_(timeout_seconds), memory_budget_(memory_limit_mib << 20) {
  ChildResult r = in_child(timeout_seconds_, memory_budget_, [&](int fd) {
    Outcome o;
    void* lib = open_library(path_);
    if (!lib) {
      o = {Status::failed, {}, std::string("cannot load: ") + dlerror()};
    } else if (auto query = symbol<Entry::Query>(lib, "posenc_plugin_query"); !query) {
      o = {Status::failed, {}, "exports no posenc_plugin_query"};
    } else if (const posenc_plugin_info* info = query(); !info) {
      o = {Status::failed, {}, "posenc_plugin_query returned NULL"};
    } else if (info->abi_version != POSENC_PLUGIN_ABI_VERSION) {
      o = {Status::failed, {}, "built for ABI version " + std::to_string(info->abi_version) + ", this posenc has " +
                                   std::to_string(POSENC_PLUGIN_ABI_VERSION)};
    } else {
      o = {Status::ok, {}, std::string(info->name ? info->name : "(unnamed)") + " " + (info->version ? info->version : "")};
    }
    send(fd, o);
  });
  Reader in(r.bytes);
  std::int32_t status = -1;
  std::uint32_t length = 0;
  std::string message;
  if (r.failure.empty() && in.get(status) && in.get(length)) {
    message.resize(length);
    in.get_bytes(message.data(), length);
  }
  if (!r.failure.empty()) throw Error("posenc: plugin " + path_ + " " + r.failure + " while being queried");
  if (status != static_cast<std::int32_t>(Status::ok)) throw Error("posenc: plugin " + path_ + ": " + message);
  name_ = message + " (" + path_ + ")";
}

std::vector<Outcome> PluginImplementation::run(const VectorGroup& group, const VectorCase& c,
                                               std::span<const Format> formats) {
  ChildResult r = in_child(timeout_seconds_, memory_budget_, [&](int fd) {
    void* lib = open_library(path_);
    for (Format f : formats) {
      send(fd, lib ? call_plugin(lib, group, c, f) : Outcome{Status::failed, {}, "cannot load"});
    }
  });
  std::vector<Outcome> out;
  Reader in(r.bytes);
  for (std::size_t i = 0; i < formats.size(); ++i) {
    Outcome o;
    std::int32_t status = 0;
    std::uint32_t length = 0;
    std::uint64_t count = 0;
    if (!in.get(status) || !in.get(length)) break;
    o.message.resize(length);
    if (!in.get_bytes(o.message.data(), length) || !in.get(count) || count > (1u << 26)) break;
    o.values.resize(count);
    if (!in.get_bytes(o.values.data(), count * sizeof(double))) break;
    o.derived = (status & 0x100) != 0;
    o.status = static_cast<Status>(status & 0xff);
    if (status < 0 || (status & 0xff) > static_cast<std::int32_t>(Status::failed)) break;
    out.push_back(std::move(o));
  }
  // Formats the child never answered: it crashed, hung or exited during them.
  const std::string why = r.failure.empty() ? "ended without answering" : r.failure;
  while (out.size() < formats.size()) {
    out.push_back({Status::failed, {}, why + " (tcId " + std::to_string(c.tc_id) + ")"});
  }
  return out;
}

}  // namespace posenc::conformance
