#pragma once
// What the plan and cache (plan.cpp) and the driver (rope.cpp) share about a row of cos/sin: its
// layout as the kernels take it, and the range of positions it is computed for.
#include <cstddef>
#include <cstdint>
#include <string>

#include "posenc/errors.hpp"
#include "posenc/fast/fast.hpp"

namespace posenc::fast::detail {

inline void check_position(std::int64_t position, const char* name) {
  if (position < -kMaxPosition || position > kMaxPosition) {
    throw InvalidParameter(name, std::to_string(position), "in [-2^32, 2^32] (the fast path's accurate range)");
  }
}

// n floats padded to whole 64-byte lines.
inline std::size_t line_padded(std::size_t n) {
  constexpr std::size_t kLine = 16;  // floats
  return (n + kLine - 1) / kLine * kLine;
}

// A row as the kernels take it (kernels.hpp, TokenRows), made in place from table_row's per-pair
// c[0, pairs) and s[0, pairs): the sines negated for the inverse rotation, and for the interleaved
// layout each value duplicated (c0 c0 c1 c1 ...), which spares its vector loop two shuffles per
// vector; so each array holds rotated_span floats (interleaved) or pairs (half). Each array is
// padded to whole 64-byte lines, so that rows in 64-byte aligned storage (detail::LineAligned)
// start on a line: a 64-byte vector load of a row then never takes two lines (1 token x 40 heads x
// 128, f32, AVX-512, in cache: 356-360 ns per call against 379-386 with rows 16-byte aligned). The
// half layout's arrays hold no more than its pairs: a row takes half the cache, and at head_dim
// 128 kept rows lie 512 bytes apart, where a stride of 1 KiB would put their lines in half of the
// L1's sets (Q and 8 K heads, 512 tokens in place: 0.905-0.912 of the in-place scale's speed
// against 0.880-0.887; paired/GQA/A/in).
inline std::size_t kernel_row_floats(const RopePlan& plan) {
  const auto span = static_cast<std::size_t>(plan.params().rotated_span());
  return 2 * line_padded(plan.params().layout == RopeLayout::interleaved ? span : span / 2);
}

inline void to_kernel_row(const RopePlan& plan, float* c, float* s) {
  const std::int64_t n = plan.pairs();
  if (plan.params().inverse) {
    for (std::int64_t i = 0; i < n; ++i) s[i] = -s[i];
  }
  if (plan.params().layout == RopeLayout::interleaved) {
    for (std::int64_t i = n - 1; i >= 0; --i) {
      c[2 * i] = c[2 * i + 1] = c[i];
      s[2 * i] = s[2 * i + 1] = s[i];
    }
  }
}

}  // namespace posenc::fast::detail
