#include <charconv>
#include <cstdlib>

#include "catalog.hpp"

namespace posenc::generator {

std::vector<std::int64_t> full_sweep() {
  std::vector<std::int64_t> p{0, 1, 2, 3, 7, 100};
  for (int k = 11; k <= 24; ++k) {
    const std::int64_t two_k = std::int64_t{1} << k;
    p.insert(p.end(), {two_k - 1, two_k, two_k + 1});
  }
  p.insert(p.end(), {1000000, 2147483647});
  return p;
}

std::vector<std::int64_t> short_sweep() { return {0, 1, 7, 2047, 2048, 65537, 16777215, 16777217, 1000000, 2147483647}; }

std::vector<std::string> position_flags(std::int64_t position) {
  std::vector<std::string> flags;
  const std::int64_t magnitude = std::llabs(position);
  if (position == 0) flags.push_back("ZeroPosition");
  if (position < 0) flags.push_back("NegativePosition");
  if (magnitude > (std::int64_t{1} << 24)) flags.push_back("PositionAboveF32Integers");
  if (magnitude >= 1000000) flags.push_back("LongContext");
  if (magnitude == 2147483647) flags.push_back("MaxInt32Position");
  return flags;
}

std::string decimal(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void describe_flags(FileBuilder& b) {
  b.note("ZeroPosition", "position 0: the rotation is the identity (times the attention factor)");
  b.note("NegativePosition", "a negative position (relative offsets; RoPE accepts any int64)");
  b.note("PositionAboveF32Integers",
         "|position| > 2^24: not every integer is a binary32 value, so an angle formed in binary32 is wrong");
  b.note("LongContext", "|position| >= 10^6");
  b.note("MaxInt32Position", "position 2^31 - 1");
  b.note("SeedExample", "a worked example of the seed documents (comment names it)");
  b.note("ModelConfig", "parameters of a published model config (comment names the model)");
  b.note("PartialRotary", "rotary_dim < head_dim");
  b.note("Inverse", "rotation by the negative angle (the backward pass)");
  b.note("EdgeInput", "zeros, signed zeros, subnormal or huge inputs");
  b.note("Cancellation", "inputs chosen so that a rotated element nearly cancels");
  b.note("Midpoint", "the exact result is a rounding midpoint of some format (ties to even)");
  b.note("SameDistance", "logits at position pairs with the same distance (must agree)");
  b.note("InvalidParameter", "the implementation must refuse the case, reporting the named parameter");
  b.note("Boundary", "the first or last valid value of a range");
  b.note(std::string(conformance::kF64OnlyFlag),
         "inputs exact in binary64 only (full-precision or format-edge inputs): judged in f64 alone; the group "
         "comment says why");
  b.note("FormatSubset",
         "inputs exact in some formats only (e.g. every bit of binary32): judged in those, which the group comment "
         "names");
}

}  // namespace posenc::generator
