#pragma once
// The rotation loop every SIMD path shares, written once over a vector-traits type V that the
// path defines with its own intrinsics (compiled with its own target flags):
//   V::kWidth                                    binary32 lanes
//   V::load<D>(p, i), V::store<D, Stream>(p, i, v)  storage D <-> binary32 lanes, RNE on store;
//                                                 Stream: non-temporal, p + i 16-byte aligned
//   V::store2<D, Stream>(p, i, v0, v1)           optional: both vectors, as one wider store
//   V::loadf(p)                                  p[0..W)
//   V::mul, V::fmadd, V::fmsub, V::fmaddsub      (fmaddsub: a*b - c in even lanes, a*b + c in odd)
//   V::swap_pairs(v)                             (v1, v0, v3, v2, ...)
// Internal linkage (anonymous namespace): each path's translation unit keeps its own copy, so the
// linker can never hand one path's instructions to another.
#include <cstdint>
#include <utility>

#include "../elements.hpp"

namespace posenc::fast::detail {
namespace {

// Two vectors' results stored at p + i: by V::store2 where the path has one (16-bit storage
// packs both into one wider store), else by two stores.
template <class V, DType D, bool Stream, class R>
void store_two(void* y, std::int64_t i, R v0, R v1) {
  if constexpr (requires { V::template store2<D, Stream>(y, i, v0, v1); }) {
    V::template store2<D, Stream>(y, i, v0, v1);
  } else {
    V::template store<D, Stream>(y, i, v0);
    V::template store<D, Stream>(y, i + V::kWidth, v1);
  }
}

// Interleaved: the vector at x + j, its pairs rotated by c[j..], s[j..] (values duplicated).
template <class V, DType D>
auto interleaved_at(const void* x, std::int64_t j, const float* c, const float* s) {
  const auto v = V::template load<D>(x, j);
  return V::fmaddsub(v, V::loadf(c + j), V::mul(V::swap_pairs(v), V::loadf(s + j)));
}

// Half: the vectors at x + i and x + h + i, rotated by c[i..], s[i..].
template <class V, DType D>
auto half_at(const void* x, std::int64_t i, std::int64_t h, const float* c, const float* s) {
  const auto a = V::template load<D>(x, i), b = V::template load<D>(x, h + i);
  const auto ci = V::loadf(c + i), si = V::loadf(s + i);
  return std::pair{V::fmsub(a, ci, V::mul(b, si)), V::fmadd(b, ci, V::mul(a, si))};
}

// Two vectors per step while they fit (a 16-bit path then stores 32 bytes at once), then one,
// then the scalar tail.
template <class V, DType D, bool Stream>
void rotate_row(bool interleaved, std::int64_t span, const float* c, const float* s, const void* x, void* y) {
  constexpr std::int64_t w = V::kWidth;
  if (interleaved) {
    std::int64_t j = 0;
    for (; j + 2 * w <= span; j += 2 * w) {
      store_two<V, D, Stream>(y, j, interleaved_at<V, D>(x, j, c, s), interleaved_at<V, D>(x, j + w, c, s));
    }
    for (; j + w <= span; j += w) V::template store<D, Stream>(y, j, interleaved_at<V, D>(x, j, c, s));
    rotate_pairs(D, true, span, j / 2, c, s, x, y);
  } else {
    const std::int64_t h = span / 2;
    std::int64_t i = 0;
    for (; i + 2 * w <= h; i += 2 * w) {
      const auto [a0, b0] = half_at<V, D>(x, i, h, c, s);
      const auto [a1, b1] = half_at<V, D>(x, i + w, h, c, s);
      store_two<V, D, Stream>(y, i, a0, a1);
      store_two<V, D, Stream>(y, h + i, b0, b1);
    }
    for (; i + w <= h; i += w) {
      const auto [a, b] = half_at<V, D>(x, i, h, c, s);
      V::template store<D, Stream>(y, i, a);
      V::template store<D, Stream>(y, h + i, b);
    }
    rotate_pairs(D, false, span, i, c, s, x, y);
  }
}

// Non-temporal stores (16 bytes each) only where every vector store of a row is 16-byte aligned:
// the row's start, and for the half layout its second half too. (malloc guarantees 16 bytes.)
inline bool can_stream(const TokenRows& r) {
  const auto aligned = [](std::uintptr_t v) { return v % 16 == 0; };
  return r.stream && aligned(reinterpret_cast<std::uintptr_t>(r.out)) &&
         aligned(static_cast<std::uintptr_t>(r.out_head_bytes)) &&
         (r.interleaved || aligned(static_cast<std::uintptr_t>(r.span / 2) * size_of(r.dtype)));
}

template <class V, DType D>
void rotate_as(const TokenRows& r) {
  const auto row = can_stream(r) ? rotate_row<V, D, true> : rotate_row<V, D, false>;
  for_each_head(r, [&](const void* x, void* y) { row(r.interleaved, r.span, r.c, r.s, x, y); });
}

template <class V>
void rotate(const TokenRows& r) {
  switch (r.dtype) {
    case DType::f32:
      return rotate_as<V, DType::f32>(r);
    case DType::bf16:
      return rotate_as<V, DType::bf16>(r);
    case DType::f16:
      return rotate_as<V, DType::f16>(r);
  }
}

}  // namespace
}  // namespace posenc::fast::detail
