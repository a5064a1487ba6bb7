#pragma once
// The rotation loop every SIMD path shares, written once over a vector-traits type V that the
// path defines with its own intrinsics (compiled with its own target flags):
//   V::kWidth                        binary32 lanes
//   V::load<D>(p, i), V::store<D>(p, i, v)   storage D <-> binary32 lanes, RNE on store
//   V::loadf(p), V::fmadd(a, b, c), V::mul(a, b), V::swap_pairs(v)   (x1, x0, x3, x2, ...)
// Internal linkage (anonymous namespace): each path's translation unit keeps its own copy, so the
// linker can never hand one path's instructions to another.
#include "../elements.hpp"

namespace posenc::fast::detail {
namespace {

template <class V, DType D>
void rotate_as(bool interleaved, std::int64_t span, const float* C, const float* S, const void* x, void* y) {
  constexpr std::int64_t w = V::kWidth;
  if (interleaved) {
    std::int64_t j = 0;
    for (; j + w <= span; j += w) {
      const auto v = V::template load<D>(x, j);
      V::template store<D>(y, j, V::fmadd(v, V::loadf(C + j), V::mul(V::swap_pairs(v), V::loadf(S + j))));
    }
    rotate_pairs(D, true, span, j / 2, C, S, x, y);
  } else {
    const std::int64_t h = span / 2;
    std::int64_t i = 0;
    for (; i + w <= h; i += w) {
      const auto a = V::template load<D>(x, i), b = V::template load<D>(x, h + i);
      const auto ya = V::fmadd(a, V::loadf(C + i), V::mul(b, V::loadf(S + i)));
      const auto yb = V::fmadd(b, V::loadf(C + h + i), V::mul(a, V::loadf(S + h + i)));
      V::template store<D>(y, i, ya);
      V::template store<D>(y, h + i, yb);
    }
    rotate_pairs(D, false, span, i, C, S, x, y);
  }
}

template <class V>
void rotate(DType d, bool interleaved, std::int64_t span, const float* C, const float* S, const void* x, void* y) {
  switch (d) {
    case DType::f32:
      return rotate_as<V, DType::f32>(interleaved, span, C, S, x, y);
    case DType::bf16:
      return rotate_as<V, DType::bf16>(interleaved, span, C, S, x, y);
    case DType::f16:
      return rotate_as<V, DType::f16>(interleaved, span, C, S, x, y);
  }
}

}  // namespace
}  // namespace posenc::fast::detail
