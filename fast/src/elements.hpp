#pragma once
// Single-element operations every path uses for its scalar work and its loop tails, so that all
// paths round identically: storage conversions (round to nearest even) and one rotated element.
// Internal linkage (anonymous namespace): every path's translation unit, compiled with its own
// target flags, keeps its own copy; shared functions would let the linker keep, say, the
// AVX-512 build of rotate_pairs and call it from the scalar path on a CPU without AVX-512.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels.hpp"

namespace posenc::fast::detail {
namespace {

inline float bf16_to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((b >> 16) | 0x40u);  // quiet NaN
  b += 0x7fffu + ((b >> 16) & 1u);
  return static_cast<std::uint16_t>(b >> 16);
}

// IEEE binary16 <-> binary32, round to nearest even, subnormals and overflow to infinity
// (what F16C's vcvtps2ph does with _MM_FROUND_TO_NEAREST_INT).
inline float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline std::uint16_t float_to_f16(float f) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t magnitude = b & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 2^16: inf
  if (magnitude < 0x38800000u) {  // below 2^-14: subnormal, quantum 2^-24
    const float q = std::nearbyint(std::fabs(f) * 0x1p24f);  // exact scaling; RNE in the default mode
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(q));
  }
  std::uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (((rounded >> 13) - (112u << 10)) & 0x7fffu));
}

inline float load(DType d, const void* p, std::int64_t i) {
  if (d == DType::f32) return static_cast<const float*>(p)[i];
  const std::uint16_t h = static_cast<const std::uint16_t*>(p)[i];
  return d == DType::bf16 ? bf16_to_float(h) : f16_to_float(h);
}

inline void store(DType d, void* p, std::int64_t i, float v) {
  if (d == DType::f32) {
    static_cast<float*>(p)[i] = v;
  } else {
    static_cast<std::uint16_t*>(p)[i] = d == DType::bf16 ? float_to_bf16(v) : float_to_f16(v);
  }
}

// Rotate pairs [first_pair, span/2) of one row (both elements read before either is written, so
// y may be x): the loop tail of the vector paths, the scalar path's body.
inline void rotate_pairs(DType d, bool interleaved, std::int64_t span, std::int64_t first_pair, const float* c,
                         const float* s, const void* x, void* y) {
  for (std::int64_t i = first_pair; i < span / 2; ++i) {
    const std::int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + span / 2;
    const float xa = load(d, x, a), xb = load(d, x, b);
    store(d, y, a, std::fma(xa, c[a], -(xb * s[a])));
    store(d, y, b, std::fma(xb, c[a], xa * s[a]));
  }
}

// Ask for the lines of one input row ahead of use, into L2 (prefetcht1), in place too: the
// hardware's stream prefetchers stop at page boundaries and go idle while a token's cos/sin row is
// computed; software prefetches a few KiB ahead keep memory busy through both. Only calls beyond
// the cache prefetch (rope.cpp, prefetches). Into L2, not non-temporal nor into L1 (Q and K of
// 4096 tokens out of place, f32: 12.1 ms per call with prefetcht1, 24.6 with prefetchnta, 14.3
// with none; paired/QK/B/out), and not with write intent in place, which is slower too: a line
// read is held exclusive when no other core has it, so the store needs no second request. A loop,
// not unrolled: a hand-written kernel of this path's shape is 6-10% slower with its prefetches
// unrolled. GCC and clang keep a loop of a run-time count rolled anyway; the pragma says so where
// the count becomes a constant. (Locality 3, prefetcht0 into L1, is the parts' prefetch a few rows
// ahead: heads_in_turn.)
template <int Locality = 2>
inline void prefetch_row(const char* p, std::size_t bytes) {
#pragma GCC unroll 1
  for (std::size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 0, Locality);
}

// The bytes of an input head row the rotation reads: its rotated span in place, out of place its
// whole row (the tail is copied).
inline std::size_t row_bytes_read(const TokenRows& r) {
  return static_cast<std::size_t>(r.in == r.out ? r.span : r.tail_end) * size_of(r.dtype);
}

// A head row's elements from span to tail_end, copied from x to y (out of place).
inline void copy_tail(const TokenRows& r, const char* x, char* y) {
  const std::size_t size = size_of(r.dtype), span = static_cast<std::size_t>(r.span) * size;
  std::memcpy(y + span, x + span, static_cast<std::size_t>(r.tail_end - r.span) * size);
}

// Heads [begin, end) of one token: prefetch(h), rotate_row(x, y) for the rotated span, then
// with Tail the elements from span to tail_end copied (out of place).
template <bool Tail, class RotateRow, class Prefetch>
void heads_in_range(const TokenRows& r, std::int64_t begin, std::int64_t end, RotateRow& rotate_row,
                    Prefetch prefetch) {
  for (std::int64_t h = begin; h < end; ++h) {
    const char* x = r.in + h * r.in_head_bytes;
    char* y = r.out + h * r.out_head_bytes;
    prefetch(h);
    rotate_row(x, y);
    if constexpr (Tail) copy_tail(r, x, y);
  }
}

// Every head row of one token, the row prefetch_ahead rows later, but at most the token's head
// count (this token's, else the next token's), prefetched first (none when prefetch_ahead is 0).
// Three loops, by where the row ahead lies, and the tail's test made once per token, so that no
// head tests either (Q and K of 4096 tokens out of place: 0.91-0.94 of a non-temporal copy's speed
// against 0.78-0.79 with one loop testing per head; paired/QK/B/out). The distance is at most the
// token's head count, so that a tensor of few heads still prefetches its next token (the row that
// far ahead would lie beyond it): Q of 32 heads and K of 8 at 4096 tokens in place, 0.81-0.84 of
// the in-place scale's speed against 0.72-0.75 (paired/GQA/B/in).
template <class RotateRow>
void for_each_head(const TokenRows& rows, RotateRow rotate_row) {
  // A copy the compiler keeps in registers: a vector store may alias any object, so the fields of
  // `rows` would be read again after every head's stores (512 tokens x 32 heads in place: 196 us
  // per call against 212).
  const TokenRows r = rows;
  const bool in_place = r.in == r.out;
  const std::size_t used = row_bytes_read(r);
  const auto heads = [&]<bool Tail>(std::bool_constant<Tail>) {
    const std::int64_t n = r.heads, a = std::min(r.prefetch_ahead, n);
    if (a <= 0) return heads_in_range<Tail>(r, 0, n, rotate_row, [](std::int64_t) {});
    // Heads whose row ahead is in this token, [0, own); in the next token, [own, next_end).
    const std::int64_t own = n - a;  // a <= n
    const std::int64_t next_end = r.next_in ? std::min(n, own + r.next_heads) : own;
    heads_in_range<Tail>(r, 0, own, rotate_row,
                         [&](std::int64_t h) { prefetch_row(r.in + (h + a) * r.in_head_bytes, used); });
    heads_in_range<Tail>(r, own, next_end, rotate_row, [&](std::int64_t h) {
      prefetch_row(r.next_in + (h + a - n) * r.next_in_head_bytes, used);
    });
    heads_in_range<Tail>(r, next_end, n, rotate_row, [](std::int64_t) {});
  };
  if (!in_place && r.tail_end > r.span) return heads(std::true_type{});
  heads(std::false_type{});
}

// Token k of part p of a run (kernels.hpp, TokenRun).
inline TokenRows token_of(const TokenRun& run, std::int64_t k, std::int64_t p = 0) {
  TokenRows t = run.first;
  t.c = run.rows[p * run.part_rows + k];
  t.s = t.c + run.sines;
  t.in = run.first.in + k * run.in_token_bytes + p * run.in_part_bytes;
  t.out = run.first.out + k * run.out_token_bytes + p * run.out_part_bytes;
  if (run.parts > 1) {
    t.prefetch_ahead = 0;
  } else if (k + 1 < run.tokens) {
    t.next_in = t.in + run.in_token_bytes;
    t.next_in_head_bytes = run.first.in_head_bytes;
    t.next_heads = run.first.heads;
  }
  return t;
}

// f(token) for each token of a run (kernels.hpp, TokenRun; of every part), in one loop that the
// vector paths' fixed-width kernels are inlined into (always_inline), so that a token costs its
// row's loads and no call.
template <class F>
void for_each_token(const TokenRun& run, F f) {
  for (std::int64_t k = 0; k < run.tokens; ++k) {
    for (std::int64_t p = 0; p < run.parts; ++p) f(token_of(run, k, p));
  }
}

// The heads of a run's parts in turn (kernels.hpp, TokenRun::parts): for each token k, head h of
// every part's token k before head h + 1 of any. prepare(p, token) once per part's token, then
// head(p, token, x, y) per head row; the elements from span to tail_end copied out of place.
// Before each head row, the row part_prefetch_ahead rows later in its part (this token's, else the
// part's next token of the run; at most a token's head count ahead) is prefetched into L1.
template <class Prepare, class Head>
void heads_in_turn(const TokenRun& run, Prepare prepare, Head head) {
  const std::int64_t n = run.parts;
  const TokenRows& r = run.first;
  const bool tail = r.in != r.out && r.tail_end > r.span;
  const std::int64_t a = std::min(run.part_prefetch_ahead, r.heads);
  const std::size_t used = row_bytes_read(r);
  TokenRows t[kMaxParts];
  for (std::int64_t k = 0; k < run.tokens; ++k) {
    for (std::int64_t p = 0; p < n; ++p) {
      t[p] = token_of(run, k, p);
      prepare(p, t[p]);
    }
    const bool next_token = k + 1 < run.tokens;
    for (std::int64_t h = 0; h < r.heads; ++h) {
      const std::int64_t g = h + a;  // the row ahead: head g of this token, else g - heads of the next
      const bool ahead = a > 0 && (g < r.heads || next_token);
      const std::ptrdiff_t at = g < r.heads ? g * r.in_head_bytes : run.in_token_bytes + (g - r.heads) * r.in_head_bytes;
      for (std::int64_t p = 0; p < n; ++p) {
        const char* x = t[p].in + h * r.in_head_bytes;
        char* y = t[p].out + h * r.out_head_bytes;
        if (ahead) prefetch_row<3>(t[p].in + at, used);
        head(p, t[p], x, y);
        if (tail) copy_tail(r, x, y);
      }
    }
  }
}

}  // namespace
}  // namespace posenc::fast::detail
