#pragma once
// What the suite and its plugin child say to each other over their socket: the child's greeting
// once it has loaded the library, then one request (an ABI call, marshalled) and one reply (the
// status, the damage report and the output bytes) for each call. The calls of one case (its
// formats) travel as one batch, and their replies come back one by one as each call returns. Each message is framed by its
// length. Both ends are this same program (the child is forked, not exec'd), so the ABI's
// parameter structs travel as their bytes.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "entry_points.hpp"
#include "posenc/plugin.h"

namespace posenc::conformance {

// The child's first message: the library loaded and queried, or why not.
struct Greeting {
  bool ok = false;
  std::string message;       // "name version" when ok, else what went wrong ("cannot load: ...")
  std::uint32_t exports = 0;  // bit_of() of each entry point the library exports
  // posenc_plugin_info.working_format, checked (0 for a plugin built for ABI version 1).
  std::array<std::int32_t, 4> working_format{};
  // posenc_plugin_info.score_format and probability_format, checked (0 before version 3).
  std::array<std::int32_t, 4> score_format{}, probability_format{};
};

// One entry point call. Only the parameter struct of the entry point's family is used. Pointers
// inside `rope` (the scaling's factor arrays) are followed by encode(); decode() points them
// into short_factor and long_factor, which is why a Request is moved, never copied. The
// pointers inside `attention` only say whether it has a rope and an alibi: the child points
// them at `rope` and `alibi` when it calls (a pointer into a Request would not survive a move).
struct Request {
  EntryPoint entry = EntryPoint::rope_apply;
  posenc_dtype dtype = POSENC_F64;
  posenc_rope_params rope{};
  posenc_sinusoidal_params sinusoidal{};
  posenc_alibi_params alibi{};
  posenc_attention_params attention{};
  std::vector<std::int64_t> counts;                  // the integer arguments, in the signature's order
  std::vector<std::vector<std::int64_t>> positions;  // the position arrays, in order
  std::vector<std::vector<unsigned char>> inputs;     // the input tensors, in the storage format
  std::vector<std::uint64_t> output_bytes;           // the size of each output buffer
  std::vector<double> short_factor, long_factor;     // decode()'s storage for rope's arrays

  Request() = default;
  Request(Request&&) = default;
  Request& operator=(Request&&) = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
};

struct Reply {
  std::int32_t status = -1;  // what the entry point returned, as an int (it may be garbage)
  std::string damage;         // empty when every buffer is as it should be, else what went wrong
  std::vector<std::vector<unsigned char>> outputs;  // each output buffer after the call
  // What the child's stdout and stderr hold once the call returned. The suite reads this reply
  // while the child goes on with the batch's next call, so the file may by then hold more: this
  // says which call printed.
  std::uint64_t printed = 0;
};

// What became of one request: the child's reply, or why there is none.
struct CallResult {
  Reply reply;
  std::string failure;  // empty when `reply` is the child's answer, else "crashed with signal 6 (...)", ...
};

std::string encode(const Greeting& g);
// A batch of calls (the formats of one case), performed in order, one reply each.
std::string encode(std::span<const Request* const> batch);
std::string encode(const Reply& r);
// Nothing when the bytes are not one whole message of that kind.
std::optional<Greeting> decode_greeting(std::string_view bytes);
std::optional<std::vector<Request>> decode_requests(std::string_view bytes);
std::optional<Reply> decode_reply(std::string_view bytes);

// Framed transfer. `deadline` empty: wait as long as it takes (the child's side).
using Deadline = std::optional<std::chrono::steady_clock::time_point>;
enum class Transfer { done, closed, timed_out, malformed };
Transfer send_message(int fd, std::string_view message, Deadline deadline);
Transfer receive_message(int fd, std::string& message, Deadline deadline);

}  // namespace posenc::conformance
