#pragma once
// Decode attention's kernels (kernels.hpp: AttendItem, AttendMerge), written once over a type L
// of 16 binary32 lanes that each path defines with its own intrinsics (one AVX-512 vector, two
// AVX2 vectors, or an array on the scalar path):
//   L::R                          16 lanes
//   L::zero(), L::set1(x), L::loadf(p), L::storef(p, v), L::hold(v)  (hold: kept in a register)
//   L::load<D>(p, i)              elements i .. i+15 of storage D, in binary32
//   L::add, L::sub, L::mul, L::div, L::fmadd(a, b, c) = a b + c rounded once
//   L::below(v, n, x)             lanes >= n replaced by x
//   L::exp(v), L::exp1(x), L::log1(x)  SLEEF's deterministic expf and logf (finz u10: the same
//                                 bits for one lane and for 8 or 16)
//   L::hsum(v), L::hmax(v)        one lane from 16 by the tree below
//   L::reduce<N>(acc, out)        out[i] = hsum(acc[i]), i < N (N = L::kDots)
//   L::kDots                      dot products formed at once (the accumulators a path can hold)
//   L::kPvAccumulators            P V's accumulators held at once, in 16-lane vectors
//
// Every rounded step is defined here, lane by lane, so that every path gives the same bits:
// - a dot product q'.k' of head_dim d: 16 lane sums, lane l accumulating q_e k_e for e = l, l + 16,
//   ... by fused multiply-adds from +0 (lanes past d add 0 x 0), then the tree
//   a_l = x_l + x_{l+8}, b_l = a_l + a_{l+4}, c_l = b_l + b_{l+2}, c_0 + c_1 (tree_sum below);
//   a maximum likewise, with x > y ? x : y (x86's max) in place of +;
// - keys go in blocks of kKeyBlock, each one step of the online softmax (Milakov and
//   Gimelshein 2018) per query row: s = scale dot (or fma(dot, scale, -slope distance) with
//   ALiBi), m' = max(m, hmax(s)), alpha = exp(m - m'), p = exp(s - m'), l' = fma(l, alpha, hsum(p)),
//   O' = alpha O then O' = fma(p_k, v_k, O') key by key;
// - the segments of a row are merged in order: M = max m, w = exp(m - M), l = fma(l_s, w, l),
//   O = fma(O_s, w, O) from +0; out = O / l, lse = M + ln l.
// The SPEC's model of a careful kernel (SPEC.md section 5, "Attention") bounds each of these
// steps; a path is free in how it schedules them, not in what it rounds.
// Internal linkage (anonymous namespace), as generic/rotate.hpp says why.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "../kernels.hpp"
#include "posenc/fast/attention.hpp"

namespace posenc::fast::detail {
namespace {

constexpr int kKeyBlock = 16;
constexpr int kMaxHeadsAtOnce = 4;  // query heads of one KV head whose dot products go together

inline float max_of(float a, float b) { return a > b ? a : b; }

// The canonical trees over 16 lanes (the scalar path's, and what every path's must equal).
inline float tree_sum(const float* x) {
  float a[8], b[4];
  for (int l = 0; l < 8; ++l) a[l] = x[l] + x[l + 8];
  for (int l = 0; l < 4; ++l) b[l] = a[l] + a[l + 4];
  return (b[0] + b[2]) + (b[1] + b[3]);
}

inline float tree_max(const float* x) {
  float a[8], b[4];
  for (int l = 0; l < 8; ++l) a[l] = max_of(x[l], x[l + 8]);
  for (int l = 0; l < 4; ++l) b[l] = max_of(a[l], a[l + 4]);
  return max_of(max_of(b[0], b[2]), max_of(b[1], b[3]));
}

template <DType D>
constexpr std::size_t kElementBytes = D == DType::f32 ? 4 : 2;

// 16 elements from element i of p, of which only the first n (< 16) exist: the others read as 0.
template <class L, DType D>
typename L::R load_first(const char* p, std::int64_t i, std::int64_t n) {
  alignas(64) unsigned char lanes[64] = {};
  std::memcpy(lanes, p + static_cast<std::size_t>(i) * kElementBytes<D>, static_cast<std::size_t>(n) * kElementBytes<D>);
  return L::template load<D>(lanes, 0);
}

// dots[h][k] = q[h] . (the key row at k_rows + k k_token_bytes) for the HC rows q and the keys
// k < n of a block, KC = L::kDots / HC keys at once (each KV row loaded and converted once for
// HC query heads). A group of keys past n repeats key k0, a query row past the caller's repeats
// another: their dot products are formed and not used.
template <class L, DType D, int HC>
void block_dots(const float* const* q, const char* k_rows, std::ptrdiff_t k_token_bytes, std::int64_t head_dim, int n,
                float (*dots)[kKeyBlock]) {
  using R = typename L::R;
  constexpr int KC = L::kDots / HC;
  static_assert(KC >= 1 && HC * KC == L::kDots);
  const std::int64_t full = head_dim / 16, tail = head_dim % 16;
  for (int k0 = 0; k0 < n; k0 += KC) {
    const char* row[KC];
    for (int j = 0; j < KC; ++j) row[j] = k_rows + (k0 + j < n ? k0 + j : k0) * k_token_bytes;
    R acc[HC * KC];
    for (auto& a : acc) a = L::zero();
    for (std::int64_t c = 0; c < full; ++c) {
      R kv[KC];
      for (int j = 0; j < KC; ++j) kv[j] = L::hold(L::template load<D>(row[j], 16 * c));
      for (int h = 0; h < HC; ++h) {
        const R qv = L::hold(L::loadf(q[h] + 16 * c));
        for (int j = 0; j < KC; ++j) acc[h * KC + j] = L::fmadd(qv, kv[j], acc[h * KC + j]);
      }
    }
    if (tail) {
      R kv[KC];
      for (int j = 0; j < KC; ++j) kv[j] = load_first<L, D>(row[j], 16 * full, tail);
      for (int h = 0; h < HC; ++h) {
        const R qv = L::loadf(q[h] + 16 * full);  // zero from head_dim on (AttendItem::q)
        for (int j = 0; j < KC; ++j) acc[h * KC + j] = L::fmadd(qv, kv[j], acc[h * KC + j]);
      }
    }
    float sums[L::kDots];
    L::template reduce<L::kDots>(acc, sums);
    for (int h = 0; h < HC; ++h) {
      for (int j = 0; j < KC && k0 + j < n; ++j) dots[h][k0 + j] = sums[h * KC + j];
    }
  }
}

// One block's step of one row's online softmax (the order above). distance: ALiBi's distances
// of the block's keys (null without ALiBi). Writes the weights p (0 past n) and returns alpha.
template <class L>
float softmax_step(float* state, const float* dots, int n, float scale, const float* distance, float negated_slope,
                   float* p) {
  using R = typename L::R;
  R s = L::loadf(dots);
  s = distance ? L::fmadd(s, L::set1(scale), L::mul(L::set1(negated_slope), L::loadf(distance)))
               : L::mul(s, L::set1(scale));
  s = L::below(s, n, -std::numeric_limits<float>::infinity());
  const float m = state[kStateM], m_new = max_of(m, L::hmax(s));
  const float alpha = L::exp1(m - m_new);
  const R weights = L::exp(L::sub(s, L::set1(m_new)));
  state[kStateL] = std::fma(state[kStateL], alpha, L::hsum(weights));
  state[kStateM] = m_new;
  L::storef(p, weights);
  return alpha;
}

// O_h = alpha_h O_h, then O_h = fma(p_h[k], v_k, O_h) for keys k < n, over 16-lane chunks
// [c0, c0 + P) of the value rows (the last chunk may hold fewer than 16 values: the others read
// as 0 and stay 0).
template <class L, DType D, int HC, int P>
void pv_chunks(float* const* o, const float* alpha, const float (*p)[kKeyBlock], const char* v_rows,
               std::ptrdiff_t v_token_bytes, std::int64_t value_dim, std::int64_t c0, int n) {
  using R = typename L::R;
  R acc[HC][P];
  for (int h = 0; h < HC; ++h) {
    const R a = L::set1(alpha[h]);
    for (int c = 0; c < P; ++c) acc[h][c] = L::mul(L::loadf(o[h] + 16 * (c0 + c)), a);
  }
  const bool whole = 16 * (c0 + P) <= value_dim;
  for (int k = 0; k < n; ++k) {
    const char* row = v_rows + k * v_token_bytes;
    R vv[P];
    for (int c = 0; c < P; ++c) {
      const std::int64_t e = 16 * (c0 + c);
      vv[c] = L::hold(whole || e + 16 <= value_dim ? L::template load<D>(row, e) : load_first<L, D>(row, e, value_dim - e));
    }
    for (int h = 0; h < HC; ++h) {
      const R w = L::hold(L::set1(p[h][k]));
      for (int c = 0; c < P; ++c) acc[h][c] = L::fmadd(w, vv[c], acc[h][c]);
    }
  }
  for (int h = 0; h < HC; ++h) {
    for (int c = 0; c < P; ++c) L::storef(o[h] + 16 * (c0 + c), acc[h][c]);
  }
}

template <class L, DType D, int HC>
void block_pv(float* const* o, const float* alpha, const float (*p)[kKeyBlock], const char* v_rows,
              std::ptrdiff_t v_token_bytes, std::int64_t value_dim, int n) {
  constexpr int P = std::max(1, L::kPvAccumulators / HC);
  const std::int64_t chunks = (value_dim + 15) / 16;
  std::int64_t c = 0;
  for (; c + P <= chunks; c += P) pv_chunks<L, D, HC, P>(o, alpha, p, v_rows, v_token_bytes, value_dim, c, n);
  for (; c < chunks; ++c) pv_chunks<L, D, HC, 1>(o, alpha, p, v_rows, v_token_bytes, value_dim, c, n);
}

// The rows of a block's keys for one KV head, `ahead` keys on (within the item), asked for in
// L2 ahead of use: K and V rows lie a token stride apart, often in a page each, which the
// hardware's stream prefetchers do not follow.
inline void prefetch_rows(const AttendItem& it, std::int64_t b0, std::int64_t g) {
  if (it.prefetch_keys == 0) return;
  const std::int64_t first = b0 + it.prefetch_keys, last = std::min(first + kKeyBlock, it.key_end);
  const auto k_bytes = static_cast<std::size_t>(it.head_dim) * size_of(it.dtype);
  const auto v_bytes = static_cast<std::size_t>(it.value_dim) * size_of(it.dtype);
  for (std::int64_t j = first; j < last; ++j) {
    const char* k = it.k + j * it.k_token_bytes + g * it.k_head_bytes;
    const char* v = it.v + j * it.v_token_bytes + g * it.v_head_bytes;
#pragma GCC unroll 1
    for (std::size_t o = 0; o < k_bytes; o += 64) __builtin_prefetch(k + o, 0, 2);
#pragma GCC unroll 1
    for (std::size_t o = 0; o < v_bytes; o += 64) __builtin_prefetch(v + o, 0, 2);
  }
}

// One work item (kernels.hpp, AttendItem), HC query heads of a KV head at once.
template <class L, DType D, int HC>
void attend_heads(const AttendItem& it) {
  const std::int64_t sf = it.state_floats, o_floats = sf - kStateO;
  const auto row_state = [&](std::int64_t t, std::int64_t h) { return it.state + (t * it.query_heads + h) * sf; };
  for (std::int64_t t = 0; t < it.tokens; ++t) {
    for (std::int64_t h = it.kv_begin * it.group; h < it.kv_end * it.group; ++h) {
      float* st = row_state(t, h);
      st[kStateM] = -std::numeric_limits<float>::infinity();
      st[kStateL] = 0;
      std::fill_n(st + kStateO, o_floats, 0.0f);
    }
  }
  alignas(64) float dots[HC][kKeyBlock] = {};
  alignas(64) float p[HC][kKeyBlock] = {};
  alignas(64) float distance[kMaxAttentionTokens][kKeyBlock] = {};
  // Rows a partial chunk of heads computes and drops (group not a multiple of HC).
  alignas(64) float unused_state[kStateO + 16 * 64] = {};
  float* unused_o = unused_state + kStateO;
  const bool whole_unused = o_floats <= 16 * 64;
  int valid[kMaxAttentionTokens];
  for (std::int64_t b0 = it.key_begin; b0 < it.key_end; b0 += kKeyBlock) {
    const int nb = static_cast<int>(std::min<std::int64_t>(kKeyBlock, it.key_end - b0));
    for (std::int64_t t = 0; t < it.tokens; ++t) {
      valid[t] = static_cast<int>(std::clamp<std::int64_t>(it.visible_end[t] - b0, 0, nb));
      if (!it.negated_slopes) continue;
      for (int k = 0; k < valid[t]; ++k) {
        std::int64_t d = it.query_positions[t] - it.key_positions[b0 + k];
        if (it.symmetric && d < 0) d = -d;
        distance[t][k] = static_cast<float>(d);
      }
    }
    for (std::int64_t g = it.kv_begin; g < it.kv_end; ++g) {
      prefetch_rows(it, b0, g);
      const char* k_rows = it.k + b0 * it.k_token_bytes + g * it.k_head_bytes;
      const char* v_rows = it.v + b0 * it.v_token_bytes + g * it.v_head_bytes;
      for (std::int64_t t = 0; t < it.tokens; ++t) {
        const int n = valid[t];
        if (n == 0) continue;
        for (std::int64_t h0 = g * it.group; h0 < (g + 1) * it.group; h0 += HC) {
          const int hc = static_cast<int>(std::min<std::int64_t>(HC, (g + 1) * it.group - h0));
          const float* q[HC];
          float* o[HC];
          float alpha[HC];
          for (int h = 0; h < HC; ++h) {
            q[h] = it.q + (t * it.query_heads + h0 + (h < hc ? h : 0)) * it.q_floats;
            o[h] = h < hc ? row_state(t, h0 + h) + kStateO : unused_o;
          }
          block_dots<L, D, HC>(q, k_rows, it.k_token_bytes, it.head_dim, n, dots);
          for (int h = 0; h < HC; ++h) {
            if (h < hc) {
              alpha[h] = softmax_step<L>(row_state(t, h0 + h), dots[h], n, it.scale,
                                         it.negated_slopes ? distance[t] : nullptr,
                                         it.negated_slopes ? it.negated_slopes[h0 + h] : 0.0f, p[h]);
            } else {
              alpha[h] = 0;
              std::fill_n(p[h], kKeyBlock, 0.0f);
            }
          }
          if (hc == HC || whole_unused) {
            block_pv<L, D, HC>(o, alpha, p, v_rows, it.v_token_bytes, it.value_dim, n);
          } else {
            for (int h = 0; h < hc; ++h) block_pv<L, D, 1>(&o[h], &alpha[h], &p[h], v_rows, it.v_token_bytes, it.value_dim, n);
          }
        }
      }
    }
  }
}

template <class L, DType D>
void attend_as(const AttendItem& it) {
  if (it.group == 1) return attend_heads<L, D, 1>(it);
  if (it.group == 2 && L::kDots % 2 == 0) return attend_heads<L, D, 2>(it);
  attend_heads<L, D, kMaxHeadsAtOnce>(it);
}

template <class L>
void attend(const AttendItem& it) {
  switch (it.dtype) {
    case DType::f32:
      return attend_as<L, DType::f32>(it);
    case DType::bf16:
      return attend_as<L, DType::bf16>(it);
    case DType::f16:
      return attend_as<L, DType::f16>(it);
  }
}

template <class L>
void attend_merge(const AttendMerge& m) {
  using R = typename L::R;
  const std::int64_t chunks = (m.value_dim + 15) / 16;
  const std::ptrdiff_t segment = m.rows * m.state_floats;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const float* first = m.state + r * m.state_floats;
    float* out = m.out + r * m.out_floats;
    float top = -std::numeric_limits<float>::infinity();
    for (std::int64_t s = 0; s < m.segments; ++s) {
      const float* st = first + s * segment;
      if (st[kStateL] != 0) top = max_of(top, st[kStateM]);
    }
    float l = 0;
    for (std::int64_t c = 0; c < chunks; ++c) L::storef(out + 16 * c, L::zero());
    for (std::int64_t s = 0; s < m.segments; ++s) {
      const float* st = first + s * segment;
      if (st[kStateL] == 0) continue;
      const float w = L::exp1(st[kStateM] - top);
      l = std::fma(st[kStateL], w, l);
      const R wv = L::set1(w);
      for (std::int64_t c = 0; c < chunks; ++c) {
        L::storef(out + 16 * c, L::fmadd(L::loadf(st + kStateO + 16 * c), wv, L::loadf(out + 16 * c)));
      }
    }
    const R lv = L::set1(l);
    for (std::int64_t c = 0; c < chunks; ++c) L::storef(out + 16 * c, L::div(L::loadf(out + 16 * c), lv));
    m.lse[r] = top + L::log1(l);
  }
}

}  // namespace
}  // namespace posenc::fast::detail
