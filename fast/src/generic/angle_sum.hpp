#pragma once
// The angle addition of the cos/sin rows (rope.cpp: a row from its anchor, an anchor from its
// coarse anchor), written once as a plain loop that each path's translation unit compiles, and
// the compiler vectorizes, with that path's own flags (SSE2, AVX2, AVX-512): 2, 4 or 8 lanes.
// Every lane does what the scalar loop does, each product and sum rounded once in binary64
// (-ffp-contract=off: no contraction into FMA; no reassociation without -ffast-math) and the
// conversion to binary32 rounded to nearest, so every path gives the same bits.
// (Each product pair fused instead, fma(c0, cy, -(s0 sy)), is no faster: 0.99-1.01 of this loop's
// speed at 512 tokens x 32 heads in place, where a row's cost is mostly its tables' and rows'
// cache traffic.)
// Internal linkage (anonymous namespace): each path keeps its own build (generic/rotate.hpp).
#include <cstddef>

namespace posenc::fast::detail {
namespace {

// cos(x + y) = cos x cos y - sin x sin y and sin(x + y) = sin x cos y + cos x sin y, for
// i in [0, m): (c0, s0) at x, (cy, sy) at y, into (c, s), which may be (c0, s0).
template <class T>
void angle_sum(const double* c0, const double* s0, const double* cy, const double* sy, std::size_t m, T* c, T* s) {
  for (std::size_t i = 0; i < m; ++i) {
    const double x = c0[i] * cy[i] - s0[i] * sy[i], y = s0[i] * cy[i] + c0[i] * sy[i];
    c[i] = static_cast<T>(x);
    s[i] = static_cast<T>(y);
  }
}

}  // namespace
}  // namespace posenc::fast::detail
