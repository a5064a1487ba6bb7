// The baselines the fast path is measured against, compiled with -O3 -march=native so the
// compiler vectorizes them as well as it can for this machine: a STREAM-style copy (with ordinary
// and with non-temporal stores, the latter also with its input prefetched or in parts at once)
// and in-place scale of the same bytes (also prefetched or in parts), a naive scalar RoPE loop, a naive loop over a
// precomputed table, and that loop written for streaming (non-temporal stores).
#include "baselines.hpp"

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace posenc::bench {

void stream_copy(const float* __restrict in, float* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
}

// The same copy with non-temporal stores (no read of the destination's lines first): what a
// memcpy of this size does, and the fastest way to write bytes that are not read back soon.
void stream_copy_nontemporal(const float* in, float* out, std::size_t n) {
  std::size_t i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % 16 != 0; ++i) out[i] = in[i];
  for (; i + 4 <= n; i += 4) _mm_stream_ps(out + i, _mm_loadu_ps(in + i));
  for (; i < n; ++i) out[i] = in[i];
  _mm_sfence();
}

void stream_scale_in_place(float* x, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= s;
}

// The two loops above with each 64-byte line of input asked for ahead_bytes early into L2
// (prefetcht1, as fast/ does beyond the core's caches: fast/src/elements.hpp, prefetch_row).
// Without it a roof can run below what the machine gives: at shape B (Q and K, 128 MiB each way)
// a non-temporal copy prefetching 8 KiB ahead takes 12.5-13.6 ms where the one above takes 14.7
// and the fused rotation 14.4. Prefetches stop a distance short of the end (none past the buffer).
constexpr std::size_t kLine = 16;  // floats

void stream_copy_nontemporal_prefetched(const float* in, float* out, std::size_t n, std::size_t ahead_bytes) {
  const std::size_t ahead = ahead_bytes / sizeof(float);
  std::size_t i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % 16 != 0; ++i) out[i] = in[i];
  for (; i + kLine <= n; i += kLine) {
    if (i + ahead < n) __builtin_prefetch(in + i + ahead, 0, 2);
    for (std::size_t j = 0; j < kLine; j += 4) _mm_stream_ps(out + i + j, _mm_loadu_ps(in + i + j));
  }
  for (; i < n; ++i) out[i] = in[i];
  _mm_sfence();
}

void stream_scale_in_place_prefetched(float* x, std::size_t n, float s, std::size_t ahead_bytes) {
  const std::size_t ahead = ahead_bytes / sizeof(float);
  std::size_t i = 0;
  // A line as one vector: GCC left a loop over the line's floats scalar beside the prefetch.
  using Line = float __attribute__((vector_size(kLine * sizeof(float))));
  for (; i + kLine <= n; i += kLine) {
    if (i + ahead < n) __builtin_prefetch(x + i + ahead, 0, 2);
    Line v;
    std::memcpy(&v, x + i, sizeof v);
    v *= s;
    std::memcpy(x + i, &v, sizeof v);
  }
  for (; i < n; ++i) x[i] *= s;
}

// The two loops above over `streams` equal parts of the buffer at once, a 64-byte line of each
// in turn (the rest, under a line per part, after): more lines in flight from more places than
// one sequential stream has, so that on some CPUs the one-stream loop is no roof (64 MiB in
// place: the scale in 4 parts 2.9-3.6 ms against 3.8-4.4 in one). Parts of 4 KiB in turn instead
// of lines run as slowly as one stream. Non-temporal copies in 2 parts are about as fast as in
// one; in 4 parts they are 4 times as slow on some CPUs (more streams of stores than the core
// combines) and the fastest roof on others, where fast/ goes in 4 parts too (rope.cpp,
// rotate_parts): the copy roofs take both.
void stream_copy_nontemporal_streams(const float* in, float* out, std::size_t n, std::size_t streams) {
  const std::size_t part = n / streams / kLine * kLine;
  if (reinterpret_cast<std::uintptr_t>(out) % 16 != 0) return stream_copy_nontemporal(in, out, n);
  for (std::size_t i = 0; i < part; i += kLine) {
    for (std::size_t k = 0; k < streams; ++k) {
      const std::size_t at = k * part + i;
      for (std::size_t j = 0; j < kLine; j += 4) _mm_stream_ps(out + at + j, _mm_loadu_ps(in + at + j));
    }
  }
  for (std::size_t i = streams * part; i < n; ++i) out[i] = in[i];
  _mm_sfence();
}

void stream_scale_in_place_streams(float* x, std::size_t n, float s, std::size_t streams) {
  const std::size_t part = n / streams / kLine * kLine;
  using Line = float __attribute__((vector_size(kLine * sizeof(float))));
  for (std::size_t i = 0; i < part; i += kLine) {
    for (std::size_t k = 0; k < streams; ++k) {
      Line v;
      std::memcpy(&v, x + k * part + i, sizeof v);
      v *= s;
      std::memcpy(x + k * part + i, &v, sizeof v);
    }
  }
  for (std::size_t i = streams * part; i < n; ++i) x[i] *= s;
}

// The reads: a 64-byte line as one vector of 32-bit words, the sum kept in one vector (the adds
// are 1 cycle each: the loop runs at the memory's pace).
using Words = std::uint32_t __attribute__((vector_size(64)));

namespace {
std::uint32_t total(const Words& v) {
  std::uint32_t s = 0;
  for (int i = 0; i < 16; ++i) s += v[i];
  return s;
}
}  // namespace

std::uint32_t stream_read(const std::uint8_t* p, std::size_t bytes) {
  Words sum{};
  for (std::size_t i = 0; i < bytes; i += 64) {
    Words v;
    std::memcpy(&v, p + i, sizeof v);
    sum += v;
  }
  return total(sum);
}

std::uint32_t stream_read_prefetched(const std::uint8_t* p, std::size_t bytes, std::size_t ahead_bytes) {
  Words sum{};
  for (std::size_t i = 0; i < bytes; i += 64) {
    if (i + ahead_bytes < bytes) __builtin_prefetch(p + i + ahead_bytes, 0, 2);
    Words v;
    std::memcpy(&v, p + i, sizeof v);
    sum += v;
  }
  return total(sum);
}

std::uint32_t stream_read_streams(const std::uint8_t* p, std::size_t bytes, std::size_t streams) {
  const std::size_t part = bytes / streams / 64 * 64;
  Words sum{};
  for (std::size_t i = 0; i < part; i += 64) {
    for (std::size_t k = 0; k < streams; ++k) {
      Words v;
      std::memcpy(&v, p + k * part + i, sizeof v);
      sum += v;
    }
  }
  return total(sum) + stream_read(p + streams * part, bytes - streams * part);
}

// table_rope's rotation written as a kernel engineer would write it for streaming: 16 pairs per
// step in the machine's widest vectors, each result line written by non-temporal stores, one
// tensor from its first token to its last (no parts, no prefetch). What a plain streaming loop
// reaches beside the copy of its bytes, with every row given: the fast path's out-of-place rows
// are read against it (bench/paired.hpp). Needs y 64-byte aligned and dim / 2 a multiple of 16
// (bench tensors: 64-byte aligned, head_dim 128); rounds as table_rope does, up to contraction.
// Its loops over tokens and heads repeat table_rope's: one template for both, with each row's loop
// a lambda, makes GCC spill table_rope's vectors to the stack (26% slower for Q and K at shape
// A), and table_rope is a baseline whose code must not move.
void table_rope_nontemporal(const float* x, float* y, const float* cos_table, const float* sin_table,
                            std::int64_t tokens, std::int64_t heads, std::int64_t dim) {
  using Line = float __attribute__((vector_size(kLine * sizeof(float))));
  // By reference: a 64-byte vector passed by value changes the ABI where AVX-512 is off (-Wpsabi).
  const auto load = [](const float* p, Line& v) { std::memcpy(&v, p, sizeof v); };
  const auto stream = [](float* p, const Line& v) {
#if defined(__AVX512F__)
    _mm512_stream_ps(p, v);
#elif defined(__AVX__)
    _mm256_stream_ps(p, __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_stream_ps(p + 8, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
#else
    for (int q = 0; q < 4; ++q) _mm_stream_ps(p + 4 * q, _mm_loadu_ps(reinterpret_cast<const float*>(&v) + 4 * q));
#endif
  };
  const std::int64_t half = dim / 2;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const float* c = cos_table + t * half;
    const float* s = sin_table + t * half;
    for (std::int64_t h = 0; h < heads; ++h) {
      const float* a = x + (t * heads + h) * dim;
      float* b = y + (t * heads + h) * dim;
      for (std::int64_t i = 0; i < half; i += static_cast<std::int64_t>(kLine)) {
        Line lo, hi, ci, si;
        load(a + i, lo);
        load(a + half + i, hi);
        load(c + i, ci);
        load(s + i, si);
        stream(b + i, lo * ci - hi * si);
        stream(b + half + i, hi * ci + lo * si);
      }
    }
  }
  _mm_sfence();
}

// What a first implementation looks like: angle and sin/cos per element, interleaved pairs.
void naive_rope(const float* x, float* y, const std::int64_t* positions, std::int64_t tokens, std::int64_t heads,
                std::int64_t dim, float base) {
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const float* a = x + (t * heads + h) * dim;
      float* b = y + (t * heads + h) * dim;
      for (std::int64_t i = 0; i < dim / 2; ++i) {
        const float theta = static_cast<float>(positions[t]) * std::pow(base, -2.0f * static_cast<float>(i) / static_cast<float>(dim));
        const float c = std::cos(theta), s = std::sin(theta);
        b[2 * i] = a[2 * i] * c - a[2 * i + 1] * s;
        b[2 * i + 1] = a[2 * i] * s + a[2 * i + 1] * c;
      }
    }
  }
}

// Handed a precomputed [tokens][dim/2] cos and sin table; half layout (contiguous halves, which
// the compiler vectorizes without shuffles).
void table_rope(const float* __restrict x, float* __restrict y, const float* __restrict cos_table,
                const float* __restrict sin_table, std::int64_t tokens, std::int64_t heads, std::int64_t dim) {
  const std::int64_t half = dim / 2;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const float* c = cos_table + t * half;
    const float* s = sin_table + t * half;
    for (std::int64_t h = 0; h < heads; ++h) {
      const float* a = x + (t * heads + h) * dim;
      float* b = y + (t * heads + h) * dim;
      for (std::int64_t i = 0; i < half; ++i) {
        b[i] = a[i] * c[i] - a[i + half] * s[i];
        b[i + half] = a[i + half] * c[i] + a[i] * s[i];
      }
    }
  }
}

}  // namespace posenc::bench
