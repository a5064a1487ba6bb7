#pragma once
// One vector case in one format as the plugin ABI call that answers it, and the call's reply back
// as an Outcome: inputs stored in the format (a case whose inputs are not values of the format
// is not put), outputs decoded, and the values the suite forms itself (dot products) derived.
#include <cstdint>
#include <functional>
#include <variant>
#include <vector>

#include "plugin_protocol.hpp"
#include "posenc/judge/implementation.hpp"

namespace posenc::conformance {

using Outputs = std::vector<std::vector<unsigned char>>;

// A case in a format, ready to be sent: the request and how to read the reply's outputs.
struct PreparedCall {
  Request request;  // its rope factor arrays point into the case's group: the group must outlive it
  std::function<std::vector<double>(const Outputs&)> values;
  bool derived = false;  // the values are the suite's own (a dot product of the outputs)
  std::int64_t tc_id = 0;
};

// The case's call in format f, or the outcome known without one (unsupported: an entry point not
// in `exports`, Greeting::exports; inputs of the wrong length or not representable in f).
std::variant<Outcome, PreparedCall> prepare(const VectorGroup& g, const VectorCase& c, Format f, std::uint32_t exports);
// The call's outcome from what became of it; a failure names the tcId.
Outcome outcome(const PreparedCall& call, CallResult result);

}  // namespace posenc::conformance
