#include "plugin_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

namespace posenc::conformance {
namespace {

// A message larger than this is garbage, not a reply (the largest real one, a learned table
// case, is far below).
constexpr std::uint64_t kMaxMessage = std::uint64_t{1} << 32;

class Writer {
 public:
  template <class T>
  void item(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  void item(bool v) { item(static_cast<std::uint8_t>(v)); }
  void bytes(const void* data, std::size_t n) { out_.append(static_cast<const char*>(data), n); }
  template <class T>
  void vector(const T* data, std::size_t n) {
    item(static_cast<std::uint64_t>(n));
    if (n > 0) bytes(data, n * sizeof(T));
  }
  template <class T>
  void vector(const std::vector<T>& v) {
    vector(v.data(), v.size());
  }
  template <class T>
  void vectors(const std::vector<std::vector<T>>& vs) {
    item(static_cast<std::uint64_t>(vs.size()));
    for (const auto& v : vs) vector(v);
  }
  void string(const std::string& s) { vector(s.data(), s.size()); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what Writer wrote; any shortfall or excess leaves ok() false.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <class T>
  void item(T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!take(&v, sizeof v)) v = T{};
  }
  // A bool travels as one byte, 0 or 1; any other byte is garbage, not a bool.
  void item(bool& v) {
    std::uint8_t byte = 0;
    item(byte);
    if (byte > 1) ok_ = false;
    v = byte == 1;
  }
  template <class T>
  void vector(std::vector<T>& v) {
    std::uint64_t n = 0;
    item(n);
    if (n > (in_.size() - at_) / sizeof(T)) {
      ok_ = false;
      return;
    }
    v.resize(n);
    if (n > 0) take(v.data(), n * sizeof(T));
  }
  template <class T>
  void vectors(std::vector<std::vector<T>>& vs) {
    std::uint64_t n = 0;
    item(n);
    // Each vector takes at least its 8-byte length: a count beyond the bytes left is garbage.
    if (n > left() / sizeof(std::uint64_t)) {
      ok_ = false;
      return;
    }
    for (std::uint64_t i = 0; i < n && ok_; ++i) vector(vs.emplace_back());
  }
  void string(std::string& s) {
    std::vector<char> chars;
    vector(chars);
    s.assign(chars.begin(), chars.end());
  }
  bool ok() const { return ok_; }
  std::size_t left() const { return in_.size() - at_; }
  bool done() const { return ok_ && at_ == in_.size(); }

 private:
  bool take(void* out, std::size_t n) {
    if (!ok_ || n > in_.size() - at_) return ok_ = false;
    std::memcpy(out, in_.data() + at_, n);
    at_ += n;
    return true;
  }
  std::string_view in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

// Each message's fields, in one order for both directions (Writer or Reader).
template <class Io, class G>
void fields(Io& io, G& g) requires std::is_same_v<std::remove_const_t<G>, Greeting> {
  io.item(g.ok);
  io.string(g.message);
  io.item(g.exports);
  io.item(g.working_format);
  io.item(g.score_format);
  io.item(g.probability_format);
}

template <class Io, class R>
void fields(Io& io, R& r) requires std::is_same_v<std::remove_const_t<R>, Reply> {
  io.item(r.status);
  io.string(r.damage);
  io.vectors(r.outputs);
  io.item(r.printed);
}

// The fields a request carries as they are, in one order for both directions.
template <class Io, class R>
void plain_fields(Io& io, R& q) {
  io.item(q.entry);
  io.item(q.dtype);
  io.item(q.rope);
  io.item(q.sinusoidal);
  io.item(q.alibi);
  io.item(q.attention);
  io.vector(q.counts);
  io.vectors(q.positions);
  io.vectors(q.inputs);
  io.vector(q.output_bytes);
}

// Then rope's factor arrays: read through the struct's pointers, stored in the request's own
// vectors with the pointers set to them.
void put_request(Writer& w, const Request& q) {
  plain_fields(w, q);
  const posenc_rope_scaling& s = q.rope.scaling;
  w.vector(s.short_factor, static_cast<std::size_t>(s.short_factor ? s.n_short_factor : 0));
  w.vector(s.long_factor, static_cast<std::size_t>(s.long_factor ? s.n_long_factor : 0));
}

void get_request(Reader& r, Request& q) {
  plain_fields(r, q);
  r.vector(q.short_factor);
  r.vector(q.long_factor);
  posenc_rope_scaling& s = q.rope.scaling;
  s.short_factor = q.short_factor.empty() ? nullptr : q.short_factor.data();
  s.long_factor = q.long_factor.empty() ? nullptr : q.long_factor.data();
}

// Waits until fd is ready for `events` or the deadline passes.
bool wait_for(int fd, short events, const Deadline& deadline) {
  while (true) {
    int wait_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1 << 30));
    }
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // let the transfer itself report the error
  }
}

Transfer send_bytes(int fd, const char* data, std::size_t n, const Deadline& deadline) {
  while (n > 0) {
    if (!wait_for(fd, POLLOUT, deadline)) return Transfer::timed_out;
    // MSG_NOSIGNAL: a child that died must not take the suite down with SIGPIPE.
    const ssize_t sent = send(fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (sent <= 0) return Transfer::closed;
    data += sent;
    n -= static_cast<std::size_t>(sent);
  }
  return Transfer::done;
}

Transfer receive_bytes(int fd, char* data, std::size_t n, const Deadline& deadline) {
  while (n > 0) {
    if (!wait_for(fd, POLLIN, deadline)) return Transfer::timed_out;
    const ssize_t got = recv(fd, data, n, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got <= 0) return Transfer::closed;
    data += got;
    n -= static_cast<std::size_t>(got);
  }
  return Transfer::done;
}

template <class M>
std::string encode_message(const M& m) {
  Writer w;
  fields(w, m);
  return w.take();
}

template <class M>
std::optional<M> decode_message(std::string_view bytes) {
  Reader r(bytes);
  M m;
  fields(r, m);
  return r.done() ? std::optional(std::move(m)) : std::nullopt;
}

}  // namespace

std::string encode(const Greeting& g) { return encode_message(g); }
std::optional<Greeting> decode_greeting(std::string_view bytes) { return decode_message<Greeting>(bytes); }
std::string encode(const Reply& p) { return encode_message(p); }
std::optional<Reply> decode_reply(std::string_view bytes) { return decode_message<Reply>(bytes); }

std::string encode(std::span<const Request* const> batch) {
  Writer w;
  w.item(static_cast<std::uint64_t>(batch.size()));
  for (const Request* q : batch) put_request(w, *q);
  return w.take();
}

std::optional<std::vector<Request>> decode_requests(std::string_view bytes) {
  Reader r(bytes);
  std::uint64_t n = 0;
  r.item(n);
  std::vector<Request> batch;
  // Each request takes at least its rope struct: a count beyond the bytes left is garbage.
  if (n > r.left() / sizeof(posenc_rope_params)) return std::nullopt;
  for (std::uint64_t i = 0; i < n && r.ok(); ++i) get_request(r, batch.emplace_back());
  return r.done() ? std::optional(std::move(batch)) : std::nullopt;
}

Transfer send_message(int fd, std::string_view message, Deadline deadline) {
  const auto length = static_cast<std::uint64_t>(message.size());
  char header[sizeof length];
  std::memcpy(header, &length, sizeof length);
  const Transfer t = send_bytes(fd, header, sizeof header, deadline);
  return t == Transfer::done ? send_bytes(fd, message.data(), message.size(), deadline) : t;
}

Transfer receive_message(int fd, std::string& message, Deadline deadline) {
  std::uint64_t length = 0;
  char header[sizeof length];
  if (const Transfer t = receive_bytes(fd, header, sizeof header, deadline); t != Transfer::done) return t;
  std::memcpy(&length, header, sizeof length);
  if (length > kMaxMessage) return Transfer::malformed;
  message.resize(static_cast<std::size_t>(length));
  return receive_bytes(fd, message.data(), message.size(), deadline);
}

}  // namespace posenc::conformance
