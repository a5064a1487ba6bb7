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
//   ALiBi), m' = max(m, hmax(s)), alpha = exp(m - m') (1 where m' = m), p = exp(s - m'),
//   l' = fma(l, alpha, hsum(p)),
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

// The dot products of the HC rows q with the keys k < n of a block at k_rows (a token stride
// apart): dots[h], lane k (lanes from n on: not dots, masked by the softmax). KC = L::kDots / HC
// keys at once, each KV row loaded and converted once for HC query heads; a group of keys past n
// repeats key k0, a query row past the caller's repeats another: their dot products are formed
// and not used. Where a path forms 16 at once (L::kDots == 16), its L::by_head turns the groups'
// sums into a vector per head; elsewhere they go through memory.
template <class L, DType D, int HC, class Ahead>
__attribute__((always_inline)) inline void block_dots(const float* const* q, const char* k_rows,
                                                      std::ptrdiff_t k_token_bytes, std::int64_t head_dim, int n,
                                                      typename L::R* dots, Ahead& ahead) {
  using R = typename L::R;
  constexpr int KC = L::kDots / HC, kGroups = kKeyBlock / KC;
  static_assert(KC >= 1 && HC * KC == L::kDots && kGroups * KC == kKeyBlock);
  const std::int64_t full = head_dim / 16, tail = head_dim % 16;
  R groups[kGroups];
  alignas(64) float sums[HC][kKeyBlock];
  for (int group = 0; group < kGroups; ++group) {
    const int k0 = group * KC;
    if (k0 >= n) {
      groups[group] = L::zero();
      continue;
    }
    ahead.issue();
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
    if constexpr (L::kDots == kKeyBlock) {
      groups[group] = L::reduce16(acc);
    } else {
      float out[L::kDots];
      L::template reduce<L::kDots>(acc, out);
      for (int h = 0; h < HC; ++h) {
        for (int j = 0; j < KC; ++j) sums[h][k0 + j] = out[h * KC + j];
      }
    }
  }
  if constexpr (L::kDots == kKeyBlock) {
    L::template by_head<HC>(groups, dots);
  } else {
    for (int h = 0; h < HC; ++h) {
      for (int k = n; k < kKeyBlock; ++k) sums[h][k] = 0;
      dots[h] = L::loadf(sums[h]);
    }
  }
}

// The tree (above) of each of HC vectors: by L::hmax_heads / hsum_heads where the path has them
// (one network for HC vectors), else one by one.
template <class L, int HC>
__attribute__((always_inline)) inline void heads_max(const typename L::R* v, float* out) {
  if constexpr (requires { L::template hmax_heads<HC>(v, out); }) {
    L::template hmax_heads<HC>(v, out);
  } else {
    for (int h = 0; h < HC; ++h) out[h] = L::hmax(v[h]);
  }
}

template <class L, int HC>
__attribute__((always_inline)) inline void heads_sum(const typename L::R* v, float* out) {
  if constexpr (requires { L::template hsum_heads<HC>(v, out); }) {
    L::template hsum_heads<HC>(v, out);
  } else {
    for (int h = 0; h < HC; ++h) out[h] = L::hsum(v[h]);
  }
}

// One block's step of the online softmax of HC rows (the order above), s their dot products.
// distance: ALiBi's distances of the block's keys (null without ALiBi). Writes the weights p (0
// past n) and alpha per row.
template <class L, int HC>
__attribute__((always_inline)) inline void softmax_step(float* const* state, typename L::R* s, int n, float scale,
                                                        const float* distance, const float* negated_slopes,
                                                        float (*p)[kKeyBlock], float* alpha) {
  using R = typename L::R;
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (int h = 0; h < HC; ++h) {
    s[h] = distance ? L::fmadd(s[h], L::set1(scale), L::mul(L::set1(negated_slopes[h]), L::loadf(distance)))
                    : L::mul(s[h], L::set1(scale));
    if (n < kKeyBlock) s[h] = L::below(s[h], n, kMasked);
  }
  float top[HC], total[HC], m_new[HC];
  heads_max<L, HC>(s, top);
  R weights[HC];
  for (int h = 0; h < HC; ++h) {
    const float m = state[h][kStateM];
    m_new[h] = max_of(m, top[h]);
    // The max rarely moves once a few blocks are in: then alpha is 1 by definition, and P V skips
    // scaling O by it.
    alpha[h] = m == m_new[h] ? 1.0f : L::exp1(m - m_new[h]);
    weights[h] = L::exp(L::sub(s[h], L::set1(m_new[h])));
    L::storef(p[h], weights[h]);
  }
  heads_sum<L, HC>(weights, total);
  for (int h = 0; h < HC; ++h) {
    state[h][kStateL] = std::fma(state[h][kStateL], alpha[h], total[h]);
    state[h][kStateM] = m_new[h];
  }
}

// O_h = alpha_h O_h, then O_h = fma(p_h[k], v_k, O_h) for keys k < n, over 16-lane chunks
// [c0, c0 + P) of the value rows (the last chunk may hold fewer than 16 values: the others read
// as 0 and stay 0).
template <class L, DType D, int HC, int P, class Ahead>
void pv_chunks(float* const* o, const float* alpha, const float (*p)[kKeyBlock], const char* v_rows,
               std::ptrdiff_t v_token_bytes, std::int64_t value_dim, std::int64_t c0, int n, Ahead& ahead) {
  using R = typename L::R;
  R acc[HC][P];
  for (int h = 0; h < HC; ++h) {
    for (int c = 0; c < P; ++c) acc[h][c] = L::loadf(o[h] + 16 * (c0 + c));
    if (alpha[h] == 1) continue;  // exact either way
    const R a = L::set1(alpha[h]);
    for (int c = 0; c < P; ++c) acc[h][c] = L::mul(acc[h][c], a);
  }
  const bool whole = 16 * (c0 + P) <= value_dim;
  for (int k = 0; k < n; ++k) {
    ahead.issue();
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

// P V's chunks per call of pv_chunks, and how many calls a row's value_dim takes.
template <class L, int HC>
constexpr int kPvChunks = std::max(1, L::kPvAccumulators / HC);

template <class L, int HC>
std::int64_t pv_calls(std::int64_t value_dim) {
  const std::int64_t chunks = (value_dim + 15) / 16;
  return chunks / kPvChunks<L, HC> + chunks % kPvChunks<L, HC>;
}

template <class L, DType D, int HC, class Ahead>
void block_pv(float* const* o, const float* alpha, const float (*p)[kKeyBlock], const char* v_rows,
              std::ptrdiff_t v_token_bytes, std::int64_t value_dim, int n, Ahead& ahead) {
  constexpr int P = kPvChunks<L, HC>;
  const std::int64_t chunks = (value_dim + 15) / 16;
  std::int64_t c = 0;
  for (; c + P <= chunks; c += P) pv_chunks<L, D, HC, P>(o, alpha, p, v_rows, v_token_bytes, value_dim, c, n, ahead);
  for (; c < chunks; ++c) pv_chunks<L, D, HC, 1>(o, alpha, p, v_rows, v_token_bytes, value_dim, c, n, ahead);
}

// The K and V rows a step (one block's KV head) asks for in L2 ahead of use: part `part` of
// `parts` of the keys of the block it.prefetch_keys keys on (within the item), every KV head of
// the item for each key, K's rows then V's: slot order, which for a cache of rows side by side is
// address order, so that the block's lines come as one stream, while the kernel reads them head
// by head, rows a token stride apart (a page apart at 8 KV heads of 128 f16), which the
// hardware's prefetchers do not follow. A row or two at a time between the step's loads (issue):
// all at once, they fill the core's miss buffers and the prefetches stall the core until memory
// answers (32K keys, f16: a third of the time on the instruction after the prefetches).
class Ahead {
 public:
  explicit Ahead(const AttendItem& it)
      : it_(it),
        k_bytes_(static_cast<std::int64_t>(static_cast<std::size_t>(it.head_dim) * size_of(it.dtype))),
        v_bytes_(static_cast<std::int64_t>(static_cast<std::size_t>(it.value_dim) * size_of(it.dtype))) {}

  // The step's rows, spread over `calls` calls of issue().
  void plan(std::int64_t b0, std::int64_t part, std::int64_t parts, std::int64_t calls) {
    left_ = 0;
    if (it_.prefetch_keys == 0) return;
    const std::int64_t block = b0 + it_.prefetch_keys, per = (kKeyBlock + parts - 1) / parts;
    key_ = block + part * per;
    const std::int64_t last = std::min({key_ + per, block + kKeyBlock, it_.key_end});
    if (key_ >= last) return;
    left_ = (last - key_) * 2 * (it_.kv_end - it_.kv_begin);
    rate_ = calls > 0 ? (left_ + calls - 1) / calls : left_;
    head_ = it_.kv_begin;
    value_ = false;
  }
  __attribute__((always_inline)) void issue() {
    for (std::int64_t i = 0; i < rate_ && left_ > 0; ++i) next();
  }
  void finish() {
    while (left_ > 0) next();
  }

 private:
  __attribute__((always_inline)) void next() {
    const char* row = value_ ? it_.v + key_ * it_.v_token_bytes + head_ * it_.v_head_bytes
                             : it_.k + key_ * it_.k_token_bytes + head_ * it_.k_head_bytes;
    const std::int64_t bytes = value_ ? v_bytes_ : k_bytes_;
#pragma GCC unroll 1
    for (std::int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(row + o, 0, 2);
    --left_;
    if (++head_ < it_.kv_end) return;
    head_ = it_.kv_begin;
    value_ = !value_;
    if (!value_) ++key_;
  }

  const AttendItem& it_;
  const std::int64_t k_bytes_, v_bytes_;
  std::int64_t left_ = 0, rate_ = 0, key_ = 0, head_ = 0;
  bool value_ = false;
};

// One work item (kernels.hpp, AttendItem), HC query heads of a KV head at once. Its units, one
// block's keys for one token and chunk of heads of one KV head, go block by block, KV head by KV
// head (the block's rows stay in L1 and L2 across its heads), and overlap: each unit's dot
// products are formed between the softmax of the unit before and that unit's P V, so that the
// softmax's chain of dependent steps (max, exp, sum) runs beside independent work.
template <class L, DType D, int HC>
void attend_heads(const AttendItem& it) {
  using R = typename L::R;
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
  alignas(64) float p[HC][kKeyBlock] = {};
  alignas(64) float distance[kMaxAttentionTokens][kKeyBlock] = {};
  // The state of rows a partial chunk of heads computes and drops (group not a multiple of HC).
  alignas(64) float unused_state[kStateO + 16 * 64] = {};
  unused_state[kStateM] = -std::numeric_limits<float>::infinity();
  const bool whole_unused = o_floats <= 16 * 64;
  int valid[kMaxAttentionTokens] = {};
  Ahead ahead(it);
  const std::int64_t head_chunks = (it.group + HC - 1) / HC;
  std::int64_t calls = 0;  // of Ahead::issue in one step of the current block

  // The block from b0 on: each token's keys in it, ALiBi's distances, the prefetch's pace.
  const auto enter_block = [&](std::int64_t b0) {
    const int nb = static_cast<int>(std::min<std::int64_t>(kKeyBlock, it.key_end - b0));
    calls = 0;
    for (std::int64_t t = 0; t < it.tokens; ++t) {
      valid[t] = static_cast<int>(std::clamp<std::int64_t>(it.visible_end[t] - b0, 0, nb));
      if (valid[t] == 0) continue;
      // Ahead::issue's calls: per key group of the dot products, per key and call of pv_chunks.
      const std::int64_t key_groups = (valid[t] + L::kDots / HC - 1) / (L::kDots / HC);
      calls += head_chunks * (key_groups + valid[t] * pv_calls<L, HC>(it.value_dim));
      if (!it.negated_slopes) continue;
      for (int k = 0; k < valid[t]; ++k) {
        std::int64_t d = it.query_positions[t] - it.key_positions[b0 + k];
        if (it.symmetric && d < 0) d = -d;
        distance[t][k] = static_cast<float>(d);
      }
    }
  };
  const auto enter_head = [&](std::int64_t b0, std::int64_t g) {
    ahead.finish();
    ahead.plan(b0, g - it.kv_begin, it.kv_end - it.kv_begin, calls);
  };
  // One block's keys for token t and query heads [h0, h0 + hc) of KV head g, n of them.
  struct Unit {
    std::int64_t b0, g, t, h0;
    int hc, n;
  };
  const auto first_token = [&](std::int64_t from) {
    while (from < it.tokens && valid[from] == 0) ++from;
    return from;
  };
  const auto complete = [&](Unit& u) {
    u.hc = static_cast<int>(std::min<std::int64_t>(HC, (u.g + 1) * it.group - u.h0));
    u.n = valid[u.t];
  };
  // The unit after u, entering its block and KV head; false after the item's last.
  const auto advance = [&](Unit& u) {
    u.h0 += HC;
    if (u.h0 >= (u.g + 1) * it.group) {
      u.t = first_token(u.t + 1);
      if (u.t == it.tokens) {
        if (++u.g == it.kv_end) {
          u.g = it.kv_begin;
          u.b0 += kKeyBlock;
          if (u.b0 >= it.key_end) return false;
          enter_block(u.b0);
        }
        enter_head(u.b0, u.g);
        u.t = first_token(0);  // a token sees every block of the item: the one that sees the most
      }
      u.h0 = u.g * it.group;
    }
    complete(u);
    return true;
  };
  const auto rows_of = [&](const Unit& u, const float** q, float** state) {
    for (int h = 0; h < HC; ++h) {
      q[h] = it.q + (u.t * it.query_heads + u.h0 + (h < u.hc ? h : 0)) * it.q_floats;
      state[h] = h < u.hc ? row_state(u.t, u.h0 + h) : unused_state;
    }
  };
  const auto dots_of = [&](const Unit& u, R* dots) {
    const float* q[HC];
    float* state[HC];
    rows_of(u, q, state);
    block_dots<L, D, HC>(q, it.k + u.b0 * it.k_token_bytes + u.g * it.k_head_bytes, it.k_token_bytes, it.head_dim, u.n,
                         dots, ahead);
  };

  if (it.key_begin >= it.key_end) return;
  Unit unit{it.key_begin, it.kv_begin, 0, 0, 0, 0};
  enter_block(unit.b0);
  enter_head(unit.b0, unit.g);
  unit.t = first_token(0);
  unit.h0 = unit.g * it.group;
  complete(unit);
  R dots[HC];
  dots_of(unit, dots);
  for (bool more = true; more;) {
    const float* q[HC];
    float* state[HC];
    float alpha[HC];
    rows_of(unit, q, state);
    softmax_step<L, HC>(state, dots, unit.n, it.scale, it.negated_slopes ? distance[unit.t] : nullptr,
                        it.negated_slopes ? it.negated_slopes + unit.h0 : nullptr, p, alpha);
    Unit next = unit;
    more = advance(next);
    if (more) dots_of(next, dots);
    float* o[HC];
    for (int h = 0; h < HC; ++h) o[h] = state[h] + kStateO;
    const char* v_rows = it.v + unit.b0 * it.v_token_bytes + unit.g * it.v_head_bytes;
    if (unit.hc == HC || whole_unused) {
      block_pv<L, D, HC>(o, alpha, p, v_rows, it.v_token_bytes, it.value_dim, unit.n, ahead);
    } else {
      for (int h = 0; h < unit.hc; ++h) {
        block_pv<L, D, 1>(&o[h], &alpha[h], &p[h], v_rows, it.v_token_bytes, it.value_dim, unit.n, ahead);
      }
    }
    unit = next;
  }
  ahead.finish();
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
