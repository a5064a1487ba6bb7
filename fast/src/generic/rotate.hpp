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
//   bf16, split by parity (see rotate_split):
//   V::load_split(p, i, even, odd)               bf16 p[i..i+2W): even- and odd-indexed elements
//   V::store_split<Stream>(p, i, even, odd)      their inverse, RNE
//   V::split_floats(p, even, odd)                binary32 p[0..2W) likewise
// A bf16 store may take every NaN it gets to have zero low 16 bits, and skip the NaN test of
// its rounding: its lanes are binary32 results of bf16 inputs (low 16 bits zero) and finite
// cos/sin, and such a result, if NaN, is an input NaN made quiet or the default NaN (IEEE 754
// 6.2.3; x86 propagates an operand's payload), so adding at most 0x8000 cannot carry into its
// exponent and its quiet bit is already set (tests/fast/fast_test.cpp, non-finite inputs).
// Internal linkage (anonymous namespace): each path's translation unit keeps its own copy, so the
// linker can never hand one path's instructions to another.
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../elements.hpp"

namespace posenc::fast::detail {
namespace {

// v, held in a register from here on. GCC folds a vector load into every instruction that uses its
// value (a memory operand in each), so a value used twice is loaded twice: in the half layout's
// loop, 14 loads per 4 stores instead of 8, which binds the loop on a core that does one 32-byte
// load a cycle, such as AMD family 17h's (1 token x 40 heads x 128 in cache, AVX2, f32: 29 ns per
// head against 39). An empty asm that takes v in a register and gives it back hides where the
// value came from; it emits nothing. The emulated AVX-512 build (64-byte vectors without 64-byte
// registers: a test of logic, not speed) keeps the compiler's choice.
template <class R>
R in_register(R v) {
#ifndef __AVX512F__
  if constexpr (sizeof(R) > 32) {
    return v;
  } else
#endif
  {
    asm("" : "+v"(v));
    return v;
  }
}

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
  const auto v = in_register(V::template load<D>(x, j));
  return V::fmaddsub(v, V::loadf(c + j), V::mul(V::swap_pairs(v), V::loadf(s + j)));
}

// (a, b) rotated in every lane: a c - b s and b c + a s, as rotate_pairs rounds them.
template <class V, class R>
std::pair<R, R> rotate_lanes(R a, R b, R c, R s) {
  return {V::fmsub(a, c, V::mul(b, s)), V::fmadd(b, c, V::mul(a, s))};
}

// Half: the vectors at x + i and x + h + i, rotated by c[i..], s[i..].
template <class V, DType D>
auto half_at(const void* x, std::int64_t i, std::int64_t h, const float* c, const float* s) {
  const auto a = in_register(V::template load<D>(x, i)), b = in_register(V::template load<D>(x, h + i));
  const auto ci = in_register(V::loadf(c + i)), si = in_register(V::loadf(s + i));
  return rotate_lanes<V>(a, b, ci, si);
}

// Two vectors per step while they fit (a 16-bit path then stores 32 bytes at once), then one,
// then the scalar tail; from element (interleaved) or pair (half) `first` on.
template <class V, DType D, bool Stream>
void rotate_row(bool interleaved, std::int64_t span, std::int64_t first, const float* c, const float* s, const void* x,
                void* y) {
  constexpr std::int64_t w = V::kWidth;
  if (interleaved) {
    std::int64_t j = first;
    for (; j + 2 * w <= span; j += 2 * w) {
      store_two<V, D, Stream>(y, j, interleaved_at<V, D>(x, j, c, s), interleaved_at<V, D>(x, j + w, c, s));
    }
    for (; j + w <= span; j += w) V::template store<D, Stream>(y, j, interleaved_at<V, D>(x, j, c, s));
    rotate_pairs(D, true, span, j / 2, c, s, x, y);
  } else {
    const std::int64_t h = span / 2;
    std::int64_t i = first;
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

// bf16 split by parity. Without a bf16 conversion instruction, widening by element costs a shuffle
// per vector and narrowing two more; a vector of 32-bit words instead holds 2W bf16 elements, the
// even-indexed ones in the low halves and the odd ones in the high halves, each made binary32
// lanes by one shift or mask and put back by one blend. A pair's two elements then sit in the same
// lane of two vectors (interleaved: the even and the odd vector; half: the same vector of both
// halves), and the token's rows are reordered once to match (SplitRows): per 2W entries, the
// even-indexed ones, then the odd ones. (AVX2: bf16 at 1.27-1.50 times f32's elements per second
// against 1.16-1.29 by element; paired/QK/B/bf16.)
constexpr std::int64_t kSplitRowFloats = 1024;  // head_dim up to 1024 (larger: by element)

template <class V>
struct SplitRows {
  float c[kSplitRowFloats], s[kSplitRowFloats];
  std::int64_t covered;  // elements (interleaved) or pairs (half) of the row the split loop takes

  // `covered` for a row of `span`, before any row is split.
  static std::int64_t covered_of(bool interleaved, std::int64_t span) {
    const std::int64_t n = interleaved ? span : span / 2;
    return n / (2 * V::kWidth) * (2 * V::kWidth);
  }

  SplitRows() = default;  // set() before use
  SplitRows(bool interleaved, std::int64_t span, const float* kc, const float* ks) { set(interleaved, span, kc, ks); }

  // The kernel row (kernels.hpp) reordered: half, entries [0, covered); interleaved, the even
  // entries only (each value is there twice), covered / 2 of them.
  void set(bool interleaved, std::int64_t span, const float* kc, const float* ks) {
    constexpr std::int64_t w = V::kWidth;
    covered = covered_of(interleaved, span);
    for (std::int64_t j = 0; j < covered; j += 2 * w) {
      const std::int64_t at = interleaved ? j / 2 : j;
      for (auto [from, to] : {std::pair{kc, c}, std::pair{ks, s}}) {
        decltype(V::loadf(from)) even, odd;
        V::split_floats(from + j, even, odd);
        V::storef(to + at, even);
        if (!interleaved) V::storef(to + at + w, odd);
      }
    }
  }
};

template <class V, bool Stream>
void rotate_split(const SplitRows<V>& p, bool interleaved, std::int64_t span, const void* x, void* y) {
  constexpr std::int64_t w = V::kWidth;
  if (interleaved) {
    for (std::int64_t j = 0; j < p.covered; j += 2 * w) {
      decltype(V::loadf(p.c)) even, odd;
      V::load_split(x, j, even, odd);
      const auto [ye, yo] = rotate_lanes<V>(in_register(even), in_register(odd), in_register(V::loadf(p.c + j / 2)),
                                   in_register(V::loadf(p.s + j / 2)));
      V::template store_split<Stream>(y, j, ye, yo);
    }
  } else {
    const std::int64_t h = span / 2;
    for (std::int64_t i = 0; i < p.covered; i += 2 * w) {
      decltype(V::loadf(p.c)) ae, ao, be, bo;
      V::load_split(x, i, ae, ao);
      V::load_split(x, h + i, be, bo);
      const auto [yae, ybe] = rotate_lanes<V>(in_register(ae), in_register(be), in_register(V::loadf(p.c + i)),
                                     in_register(V::loadf(p.s + i)));
      const auto [yao, ybo] = rotate_lanes<V>(in_register(ao), in_register(bo), in_register(V::loadf(p.c + i + w)),
                                     in_register(V::loadf(p.s + i + w)));
      V::template store_split<Stream>(y, i, yae, yao);
      V::template store_split<Stream>(y, h + i, ybe, ybo);
    }
  }
}

// Rows exactly N vectors of pairs wide per array (half: span / 2 == N w; interleaved: span == N
// w), N a power of two, by a loop of N steps that the compiler unrolls: the arithmetic is
// rotate_row's, lane for lane. What of the row fits in V::kRowRegisters vectors is loaded once per
// token instead of once per head (fits_in_registers): both arrays, else the cosines alone, so that
// each head loads its own elements and at most the sines (AVX-512, head_dim 128, f32, 1 token x 40
// heads in L1: 253-257 ns per call with the whole row held against 354-362). With none of it held,
// the fixed trip count alone beats rotate_row's general loops. Not taken, though faster in
// hand-written loops: each head's results stored in address order (slower with non-temporal
// stores), and two heads per step where the sines are not held (GCC then moves the held cosines to
// the stack). The per-head lambdas are left to GCC for f32, where forcing them inline is slower;
// bf16's are forced (rotate_split_fixed).
constexpr std::int64_t kMaxFixedVectors = 64;  // N; wider rows take rotate_row

// K vectors of a row at p: held in registers from construction (Hold), else loaded at each use.
template <class V, std::int64_t K, bool Hold>
class RowVectors {
 public:
  using R = decltype(V::loadf(nullptr));
  explicit RowVectors(const float* p) : p_(p) {
    if constexpr (Hold) {
      for (std::int64_t k = 0; k < K; ++k) v_[k] = in_register(V::loadf(p + k * V::kWidth));
    }
  }
  R operator[](std::int64_t k) const {
    if constexpr (Hold) {
      return v_[k];
    } else {
      return in_register(V::loadf(p_ + k * V::kWidth));
    }
  }

 private:
  const float* p_;
  R v_[Hold ? K : 1];
};

// Whether k vectors of a row, held, take only registers the loop can spare.
template <class V>
constexpr bool fits_in_registers(std::int64_t k) {
  return k <= V::kRowRegisters;
}

// One head row of N vectors per array (rotate_heads_fixed), interleaved and half, by the row's
// vectors c and s (RowVectors).
template <class V, DType D, bool Stream, std::int64_t N, class C, class S>
__attribute__((always_inline)) inline void interleaved_head_fixed(const C& c, const S& s, const void* x, void* y) {
  constexpr std::int64_t w = V::kWidth;
  for (std::int64_t n = 0; n < N; ++n) {
    const auto v = in_register(V::template load<D>(x, n * w));
    V::template store<D, Stream>(y, n * w, V::fmaddsub(v, c[n], V::mul(V::swap_pairs(v), s[n])));
  }
}

template <class V, DType D, bool Stream, std::int64_t N, class C, class S>
__attribute__((always_inline)) inline void half_head_fixed(const C& c, const S& s, const void* x, void* y) {
  constexpr std::int64_t w = V::kWidth, h = N * w;
  for (std::int64_t n = 0; n < N; ++n) {
    const auto a = in_register(V::template load<D>(x, n * w)), b = in_register(V::template load<D>(x, h + n * w));
    const auto [ya, yb] = rotate_lanes<V>(a, b, c[n], s[n]);
    V::template store<D, Stream>(y, n * w, ya);
    V::template store<D, Stream>(y, h + n * w, yb);
  }
}

template <class V, DType D, bool Stream, std::int64_t N>
__attribute__((always_inline)) inline void rotate_heads_fixed(const TokenRows& r) {
  const RowVectors<V, N, fits_in_registers<V>(N)> c(r.c);
  const RowVectors<V, N, fits_in_registers<V>(2 * N)> s(r.s);
  if (r.interleaved) {
    return for_each_head(r, [&](const void* x, void* y) { interleaved_head_fixed<V, D, Stream, N>(c, s, x, y); });
  }
  for_each_head(r, [&](const void* x, void* y) { half_head_fixed<V, D, Stream, N>(c, s, x, y); });
}

// rotate_split for rows of exactly M steps of 2W entries (the split loop's whole row), as
// rotate_heads_fixed: a fixed trip count, and what of the reordered row fits in registers held
// across the token's heads. Its per-head lambdas forced inline: GCC otherwise calls one per head,
// which reloads the held row and ends in a vzeroupper (bf16, 16 tokens x 64 heads in L2: 10.5 us
// per call against 12.5); f32's kernels keep GCC's choice (kMaxFixedVectors). Narrowing by AVX-512
// BF16's vcvtne2ps2bf16 instead (which reads a subnormal lane as zero, so such lanes need the
// integer rounding besides) gains 3% or less: too little for a path of its own, with its own CPUID
// test and dispatch.
// One head row of M steps of 2W entries (rotate_split_fixed), interleaved and half, by the
// reordered row's vectors c and s (RowVectors: M of each interleaved, 2M half).
template <class V, bool Stream, std::int64_t M, class C, class S>
__attribute__((always_inline)) inline void interleaved_split_head(const C& c, const S& s, const void* x, void* y) {
  constexpr std::int64_t w = V::kWidth;
  for (std::int64_t m = 0; m < M; ++m) {
    decltype(V::loadf(nullptr)) even, odd;
    V::load_split(x, 2 * w * m, even, odd);
    const auto [ye, yo] = rotate_lanes<V>(in_register(even), in_register(odd), c[m], s[m]);
    V::template store_split<Stream>(y, 2 * w * m, ye, yo);
  }
}

// Per step of 2W: the even entries, then the odd.
template <class V, bool Stream, std::int64_t M, class C, class S>
__attribute__((always_inline)) inline void half_split_head(const C& c, const S& s, const void* x, void* y) {
  constexpr std::int64_t w = V::kWidth, h = M * 2 * w;
  for (std::int64_t m = 0; m < M; ++m) {
    const std::int64_t i = 2 * w * m;
    decltype(V::loadf(nullptr)) ae, ao, be, bo;
    V::load_split(x, i, ae, ao);
    V::load_split(x, h + i, be, bo);
    const auto [yae, ybe] = rotate_lanes<V>(in_register(ae), in_register(be), c[2 * m], s[2 * m]);
    const auto [yao, ybo] = rotate_lanes<V>(in_register(ao), in_register(bo), c[2 * m + 1], s[2 * m + 1]);
    V::template store_split<Stream>(y, i, yae, yao);
    V::template store_split<Stream>(y, h + i, ybe, ybo);
  }
}

template <class V, bool Stream, std::int64_t M>
__attribute__((always_inline)) inline void rotate_split_fixed(const SplitRows<V>& p, const TokenRows& r) {
  if (r.interleaved) {
    const RowVectors<V, M, fits_in_registers<V>(M)> c(p.c);
    const RowVectors<V, M, fits_in_registers<V>(2 * M)> s(p.s);
    return for_each_head(r, [&](const void* x, void* y) __attribute__((always_inline)) {
      interleaved_split_head<V, Stream, M>(c, s, x, y);
    });
  }
  const RowVectors<V, 2 * M, fits_in_registers<V>(2 * M)> c(p.c);
  const RowVectors<V, 2 * M, fits_in_registers<V>(4 * M)> s(p.s);
  for_each_head(r, [&](const void* x, void* y) __attribute__((always_inline)) { half_split_head<V, Stream, M>(c, s, x, y); });
}

// f(std::integral_constant<std::int64_t, N>{}) for the first power of two N <= Max with fits(N),
// instantiating the held kernels for each N; returns whether one was called.
template <std::int64_t Max, std::int64_t N = 1, class Fits, class F>
bool with_power_of_two(Fits fits, F f) {
  if constexpr (N > Max) {
    return false;
  } else {
    if (fits(N)) {
      f(std::integral_constant<std::int64_t, N>{});
      return true;
    }
    return with_power_of_two<Max, 2 * N>(fits, f);
  }
}

// Non-temporal stores (16 bytes each) only where every vector store of a run's rows is 16-byte
// aligned: each row's start, and for the half layout its second half too. (malloc guarantees
// 16 bytes.)
inline bool can_stream(const TokenRun& run) {
  const TokenRows& r = run.first;
  const auto aligned = [](std::uintptr_t v) { return v % 16 == 0; };
  return r.stream && aligned(reinterpret_cast<std::uintptr_t>(r.out)) &&
         aligned(static_cast<std::uintptr_t>(r.out_head_bytes)) &&
         (run.tokens == 1 || aligned(static_cast<std::uintptr_t>(run.out_token_bytes))) &&
         (run.parts == 1 || aligned(static_cast<std::uintptr_t>(run.out_part_bytes))) &&
         (r.interleaved || aligned(static_cast<std::uintptr_t>(r.span / 2) * size_of(r.dtype)));
}

// A run of several parts (kernels.hpp, TokenRun::parts), their heads in turn (heads_in_turn),
// each part's row loaded per head (none held: a row per part would take more registers than
// there are). Each element's arithmetic is rotate_heads's (bf16 rows off the split kernels' sizes
// go by element, rotate_row, as rotate_split's tail does), so the bits are its bits.
template <class V, DType D, bool Stream>
void rotate_in_turn(const TokenRun& run) {
  const TokenRows& r0 = run.first;
  const auto none = [](std::int64_t, const TokenRows&) {};
  if constexpr (D == DType::bf16) {
    if (r0.span <= kSplitRowFloats) {
      const std::int64_t n = r0.interleaved ? r0.span : r0.span / 2;
      const std::int64_t covered = SplitRows<V>::covered_of(r0.interleaved, r0.span);
      SplitRows<V> split[kMaxParts];
      const auto reorder = [&](std::int64_t p, const TokenRows& t) { split[p].set(t.interleaved, t.span, t.c, t.s); };
      const auto fits = [&](std::int64_t m) { return covered == n && n == 2 * m * V::kWidth; };
      const auto fixed = [&](auto m) {
        heads_in_turn(run, reorder, [&](std::int64_t p, const TokenRows& t, const void* x, void* y) __attribute__((always_inline)) {
          if (t.interleaved) {
            interleaved_split_head<V, Stream, m()>(RowVectors<V, m(), false>(split[p].c), RowVectors<V, m(), false>(split[p].s), x, y);
          } else {
            half_split_head<V, Stream, m()>(RowVectors<V, 2 * m(), false>(split[p].c), RowVectors<V, 2 * m(), false>(split[p].s), x, y);
          }
        });
      };
      if (with_power_of_two<kMaxFixedVectors / 2>(fits, fixed)) return;
    }
  }
  const auto fits = [&](std::int64_t m) { return r0.span == (r0.interleaved ? m : 2 * m) * V::kWidth; };
  const auto fixed = [&](auto m) {
    heads_in_turn(run, none, [&](std::int64_t, const TokenRows& t, const void* x, void* y) __attribute__((always_inline)) {
      const RowVectors<V, m(), false> c(t.c), s(t.s);
      if (t.interleaved) {
        interleaved_head_fixed<V, D, Stream, m()>(c, s, x, y);
      } else {
        half_head_fixed<V, D, Stream, m()>(c, s, x, y);
      }
    });
  };
  if (with_power_of_two<kMaxFixedVectors>(fits, fixed)) return;
  heads_in_turn(run, none, [&](std::int64_t, const TokenRows& t, const void* x, void* y) {
    rotate_row<V, D, Stream>(t.interleaved, t.span, 0, t.c, t.s, x, y);
  });
}

// Every head row of a run's tokens; the store mode is a template argument, so that the row loops
// inline into the loop over heads (indirect calls per row take ~11% of the time of 1 token x 32
// heads x 128, bf16, in cache), and the kernel is chosen once per run.
template <class V, DType D, bool Stream>
void rotate_heads(const TokenRun& run) {
  if (run.parts > 1) return rotate_in_turn<V, D, Stream>(run);
  const TokenRows& r0 = run.first;
  if constexpr (D == DType::bf16) {
    if (r0.span <= kSplitRowFloats) {
      const std::int64_t n = r0.interleaved ? r0.span : r0.span / 2;
      const std::int64_t covered = SplitRows<V>::covered_of(r0.interleaved, r0.span);
      const auto fits = [&](std::int64_t m) { return covered == n && n == 2 * m * V::kWidth; };
      const auto fixed = [&](auto m) {
        for_each_token(run, [&](const TokenRows& r) __attribute__((always_inline)) {
          rotate_split_fixed<V, Stream, m()>(SplitRows<V>(r.interleaved, r.span, r.c, r.s), r);
        });
      };
      if (with_power_of_two<kMaxFixedVectors / 2>(fits, fixed)) return;
      return for_each_token(run, [&](const TokenRows& r) {
        const SplitRows<V> split(r.interleaved, r.span, r.c, r.s);
        for_each_head(r, [&](const void* x, void* y) {
          rotate_split<V, Stream>(split, r.interleaved, r.span, x, y);
          if (covered < n) rotate_row<V, D, Stream>(r.interleaved, r.span, covered, r.c, r.s, x, y);
        });
      });
    }
  }
  const auto fits = [&](std::int64_t m) { return r0.span == (r0.interleaved ? m : 2 * m) * V::kWidth; };
  const auto fixed = [&](auto m) {
    for_each_token(run, [&](const TokenRows& r) __attribute__((always_inline)) { rotate_heads_fixed<V, D, Stream, m()>(r); });
  };
  if (with_power_of_two<kMaxFixedVectors>(fits, fixed)) return;
  for_each_token(run, [&](const TokenRows& r) {
    for_each_head(r, [&](const void* x, void* y) { rotate_row<V, D, Stream>(r.interleaved, r.span, 0, r.c, r.s, x, y); });
  });
}

template <class V, DType D>
void rotate_as(const TokenRun& run) {
  return can_stream(run) ? rotate_heads<V, D, true>(run) : rotate_heads<V, D, false>(run);
}

template <class V>
void rotate(const TokenRun& run) {
  switch (run.first.dtype) {
    case DType::f32:
      return rotate_as<V, DType::f32>(run);
    case DType::bf16:
      return rotate_as<V, DType::bf16>(run);
    case DType::f16:
      return rotate_as<V, DType::f16>(run);
  }
}

}  // namespace
}  // namespace posenc::fast::detail
