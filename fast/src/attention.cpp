// Decode attention's driver, shared by every ISA path: the plan, the checks of a call, the new
// tokens' rotation (rope.cpp's rope_apply) and append, the split of the keys into segments and of
// the KV heads into groups over the threads, and the merge of the segments (the kernels are
// generic/attend.hpp's, one build per path).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "elements.hpp"
#include "kernels.hpp"
#include "rows.hpp"
#include "workers.hpp"
#include "posenc/errors.hpp"
#include "posenc/fast/attention.hpp"
#include "posenc/formulas/attention_scale.hpp"
#include "posenc/strided_view.hpp"

namespace posenc::fast {

AttentionPlan::AttentionPlan(const AttentionParams& params) : params_(params) {
  validate(params_);
  if (params_.mask == AttentionMask::explicit_) {
    throw InvalidParameter("attention.mask", "explicit", "none or causal (the fast decode attention takes no explicit mask)");
  }
  if (params_.rope_table_given) {
    throw InvalidParameter("attention.rope_table_given", "true",
                           "false (the fast path computes its cos/sin rows from the RoPE plan)");
  }
  if (params_.rope) rope_.emplace(*params_.rope);
  const long double scale = formulas::attention_scale<long double>(params_);
  scale_ = static_cast<float>(scale);
  if (!(scale_ > 0) || scale_ > std::numeric_limits<float>::max()) {
    throw InvalidParameter("attention.scale", std::to_string(static_cast<double>(scale)),
                           "a scale whose binary32 rounding is finite and > 0");
  }
  if (params_.alibi) {
    for (float slope : alibi_slopes(*params_.alibi)) negated_slopes_.push_back(-slope);
  }
}

namespace {

using detail::AttendItem;
using detail::AttendMerge;
using detail::kStateO;

// Values rounded up to whole 16-lane vectors (generic/attend.hpp).
std::int64_t lanes16(std::int64_t n) { return (n + 15) / 16 * 16; }

// Keys per segment, and at most how many segments: a row's partial softmax per segment is merged
// at the end, so segments are few (at most kMaxSegments, ~18 KiB of partial results each for one
// token of 32 heads of 128) and long enough that the merge is nothing next to them. They depend
// on the keys alone, never on the threads, so that every thread count gives the same bits.
constexpr std::int64_t kSegmentKeys = 512;
constexpr std::int64_t kMaxSegments = 32;
// Work items a thread can take at least (attention_decode): enough that a thread's late start or
// another process on its core leaves the others work to take.
constexpr std::int64_t kItemsPerThread = 4;

void check_dtype(DType d, const char* name) {
  if (static_cast<int>(d) < 0 || static_cast<int>(d) > 2) {
    throw InvalidParameter(name, std::to_string(static_cast<int>(d)), "f32, bf16 or f16");
  }
}

void check_not_null(const void* p, const char* name) {
  if (!p) throw InvalidParameter(name, "null", "non-null");
}

// The checked views of one call, with their extents.
struct View {
  StridedView view;
  std::size_t bytes;
};

View read_view(StridedView v, const char* outer_stride, const char* inner_stride) {
  return {v, check_view(v, outer_stride, inner_stride, false)};
}

View written_view(StridedView v, const char* outer_stride, const char* inner_stride) {
  return {v, check_view(v, outer_stride, inner_stride, true)};
}

void check_apart(const View& a, const View& b) { check_disjoint(a.view, a.bytes, b.view, b.bytes); }

// A flat array of n elements as a view (positions, lse).
View flat_view(const char* name, const void* p, std::int64_t n, std::size_t size, bool written) {
  const StridedView v{name, p, 1, 1, n, 0, 0, size};
  return {v, check_view(v, name, name, written)};
}

// Slot `slot`'s row of KV head 0 in a cache tensor.
const char* slot_of(const void* base, std::int64_t slot, std::int64_t token_stride, DType d) {
  return static_cast<const char*>(base) + slot * token_stride * static_cast<std::int64_t>(size_of(d));
}

// Sizes, strides, overlaps and positions of a call: everything before anything is written. The
// new keys and values may be the cache's own slots (same address and strides: in place); any
// other overlap of what the call reads with what it writes is refused.
void check_call(const AttentionPlan& plan, const KvCache& cache, std::int64_t length, const AttentionTokens& t,
                const Options& options) {
  const AttentionParams& p = plan.params();
  check_dtype(cache.dtype, "cache.dtype");
  check_dtype(t.dtype, "tokens.dtype");
  if (options.threads < 1) throw InvalidParameter("threads", std::to_string(options.threads), ">= 1");
  const std::int64_t n = t.count;
  if (n < 1 || n > kMaxAttentionTokens) {
    throw InvalidParameter("tokens.count", std::to_string(n),
                           "in [1, " + std::to_string(kMaxAttentionTokens) + "] (a longer prefill goes in blocks)");
  }
  if (length < 0) throw InvalidParameter("cache_length", std::to_string(length), ">= 0");
  if (cache.capacity < 1 || length > cache.capacity - n) {
    throw InvalidParameter("cache.capacity", std::to_string(cache.capacity),
                           "at least cache_length + tokens.count = " + std::to_string(length + n) +
                               " slots (the new tokens' keys and values go after the cache's)");
  }
  check_not_null(cache.k, "cache.k");
  check_not_null(cache.v, "cache.v");
  check_not_null(t.q, "tokens.q");
  check_not_null(t.k, "tokens.k");
  check_not_null(t.v, "tokens.v");
  check_not_null(t.out, "tokens.out");
  check_not_null(t.positions, "tokens.positions");
  if (p.alibi) check_not_null(cache.positions, "cache.positions");

  const std::int64_t H = p.query_heads, G = p.kv_heads, d = p.head_dim, dv = p.value_dim;
  const std::size_t cs = size_of(cache.dtype), ts = size_of(t.dtype);
  const View ck = written_view({"cache.k", cache.k, cache.capacity, G, d, cache.k_token_stride, cache.k_head_stride, cs},
                               "cache.k_token_stride", "cache.k_head_stride");
  const View cv = written_view({"cache.v", cache.v, cache.capacity, G, dv, cache.v_token_stride, cache.v_head_stride, cs},
                               "cache.v_token_stride", "cache.v_head_stride");
  check_apart(ck, cv);
  const View q = read_view({"tokens.q", t.q, n, H, d, t.q_token_stride, t.q_head_stride, ts}, "tokens.q_token_stride",
                           "tokens.q_head_stride");
  const View out = written_view({"tokens.out", t.out, n, H, dv, t.out_token_stride, t.out_head_stride, ts},
                                "tokens.out_token_stride", "tokens.out_head_stride");
  std::vector<const View*> read{&q}, written{&ck, &cv, &out};
  const bool k_in_place = t.k == slot_of(cache.k, length, cache.k_token_stride, cache.dtype) &&
                          t.k_token_stride == cache.k_token_stride && t.k_head_stride == cache.k_head_stride;
  const bool v_in_place = t.v == slot_of(cache.v, length, cache.v_token_stride, cache.dtype) &&
                          t.v_token_stride == cache.v_token_stride && t.v_head_stride == cache.v_head_stride;
  View k{}, v{}, lse{}, positions{}, cache_positions{};
  if (!k_in_place) {
    k = read_view({"tokens.k", t.k, n, G, d, t.k_token_stride, t.k_head_stride, cs}, "tokens.k_token_stride",
                  "tokens.k_head_stride");
    read.push_back(&k);
  }
  if (!v_in_place) {
    v = read_view({"tokens.v", t.v, n, G, dv, t.v_token_stride, t.v_head_stride, cs}, "tokens.v_token_stride",
                  "tokens.v_head_stride");
    read.push_back(&v);
  }
  if (t.lse) {
    lse = flat_view("tokens.lse", t.lse, n * H, ts, true);
    written.push_back(&lse);
  }
  positions = flat_view("tokens.positions", t.positions, n * p.position_axes(), sizeof(std::int64_t), false);
  read.push_back(&positions);
  if (cache.positions) {
    cache_positions = flat_view("cache.positions", cache.positions, cache.capacity, sizeof(std::int64_t), true);
    written.push_back(&cache_positions);
  }
  for (std::size_t i = 0; i < written.size(); ++i) {
    for (std::size_t j = i + 1; j < written.size(); ++j) check_apart(*written[i], *written[j]);
    for (const View* r : read) check_apart(*written[i], *r);
  }

  const std::int64_t axes = p.position_axes();
  if (p.rope) {
    for (std::int64_t i = 0; i < n * axes; ++i) detail::check_position(t.positions[i], "tokens.positions");
  }
  if (p.alibi) {
    // SPEC 2.5: positions in [0, 2^53]; in causal mode no key a query sees lies after it.
    constexpr std::int64_t kMax = std::int64_t{1} << 53;
    const auto check_range = [&](std::int64_t x, const std::string& name) {
      if (x < 0 || x > kMax) throw InvalidParameter(name, std::to_string(x), "in [0, 2^53] (ALiBi's positions)");
    };
    std::int64_t latest = -1, latest_slot = 0;
    for (std::int64_t j = 0; j < length; ++j) {
      check_range(cache.positions[j], "cache.positions[" + std::to_string(j) + "]");
      if (cache.positions[j] > latest) latest = cache.positions[j], latest_slot = j;
    }
    for (std::int64_t i = 0; i < n; ++i) check_range(t.positions[i * axes], "tokens.positions[" + std::to_string(i * axes) + "]");
    if (p.alibi->mode == AlibiMode::causal) {
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t query = t.positions[i * axes];
        if (latest > query) {
          throw InvalidParameter("cache.positions[" + std::to_string(latest_slot) + "]", std::to_string(latest),
                                 "at most " + std::to_string(query) + ", the position of new token " + std::to_string(i) +
                                     ", which sees it (causal ALiBi: no key after its query)");
        }
        const std::int64_t seen = p.mask == AttentionMask::causal ? i : n - 1;
        for (std::int64_t j = 0; j <= seen; ++j) {
          if (t.positions[j * axes] > query) {
            throw InvalidParameter("tokens.positions[" + std::to_string(j * axes) + "]", std::to_string(t.positions[j * axes]),
                                   "at most " + std::to_string(query) + ", the position of new token " + std::to_string(i) +
                                       ", which sees it (causal ALiBi: no key after its query)");
          }
        }
      }
    }
  }
}

// A thread's buffers, kept across calls (a decode step's calls all have the same sizes): q' in
// binary32, the segments' partial softmaxes, the merged outputs.
struct Scratch {
  std::vector<float, detail::LineAligned<float>> q, state, merged, lse;
};
thread_local Scratch scratch;

// The new tokens' queries in binary32, [count][query_heads][q_floats], zero past head_dim, and
// rotated; their keys rotated into the cache's slots and their values copied there.
void rotate_and_append(const AttentionPlan& plan, const KvCache& cache, std::int64_t length, const AttentionTokens& t,
                       Isa isa, std::int64_t q_floats, float* q) {
  const AttentionParams& p = plan.params();
  const std::int64_t n = t.count, H = p.query_heads, G = p.kv_heads, d = p.head_dim, dv = p.value_dim;
  const auto ts = static_cast<std::int64_t>(size_of(t.dtype)), cs = static_cast<std::int64_t>(size_of(cache.dtype));
  std::fill_n(q, n * H * q_floats, 0.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t h = 0; h < H; ++h) {
      const char* row = static_cast<const char*>(t.q) + (i * t.q_token_stride + h * t.q_head_stride) * ts;
      float* to = q + (i * H + h) * q_floats;
      for (std::int64_t e = 0; e < d; ++e) to[e] = detail::load(t.dtype, row, e);
    }
  }
  char* k_slots = static_cast<char*>(cache.k) + length * cache.k_token_stride * cs;
  char* v_slots = static_cast<char*>(cache.v) + length * cache.v_token_stride * cs;
  if (const RopePlan* rope = plan.rope()) {
    Options one;
    one.isa = isa;
    RopeTensor qt;
    qt.in = qt.out = q;
    qt.in_token_stride = qt.out_token_stride = H * q_floats;
    qt.in_head_stride = qt.out_head_stride = q_floats;
    rope_apply(*rope, DType::f32, n, H, t.positions, qt, {}, one);
    RopeTensor kt;
    kt.in = t.k;
    kt.out = k_slots;
    kt.in_token_stride = t.k_token_stride;
    kt.in_head_stride = t.k_head_stride;
    kt.out_token_stride = cache.k_token_stride;
    kt.out_head_stride = cache.k_head_stride;
    rope_apply(*rope, cache.dtype, n, G, t.positions, kt, {}, one);
  } else if (t.k != k_slots) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t g = 0; g < G; ++g) {
        std::memcpy(k_slots + (i * cache.k_token_stride + g * cache.k_head_stride) * cs,
                    static_cast<const char*>(t.k) + (i * t.k_token_stride + g * t.k_head_stride) * cs,
                    static_cast<std::size_t>(d * cs));
      }
    }
  }
  if (t.v != v_slots) {
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t g = 0; g < G; ++g) {
        std::memcpy(v_slots + (i * cache.v_token_stride + g * cache.v_head_stride) * cs,
                    static_cast<const char*>(t.v) + (i * t.v_token_stride + g * t.v_head_stride) * cs,
                    static_cast<std::size_t>(dv * cs));
      }
    }
  }
  if (cache.positions) {
    for (std::int64_t i = 0; i < n; ++i) cache.positions[length + i] = t.positions[i * p.position_axes()];
  }
}

// How far ahead an item prefetches its rows, in keys: beyond the core's own cache, the
// hardware's prefetchers do not follow rows a token stride apart (generic/attend.hpp, Ahead).
std::int64_t prefetch_keys(double cache_bytes) {
  return 2 * cache_bytes > static_cast<double>(detail::core_cache_bytes()) ? 2 * 16 : 0;
}

}  // namespace

void attention_decode(const AttentionPlan& plan, const KvCache& cache, std::int64_t cache_length,
                      const AttentionTokens& tokens, const Options& options) {
  check_call(plan, cache, cache_length, tokens, options);
  const Isa isa = options.isa ? *options.isa : selected_isa();
  const detail::Kernels& kernels = detail::kernels(isa);
  const AttentionParams& p = plan.params();
  const std::int64_t n = tokens.count, H = p.query_heads, G = p.kv_heads;
  const std::int64_t q_floats = lanes16(p.head_dim), state_floats = kStateO + lanes16(p.value_dim);
  const std::int64_t total = cache_length + n;
  const std::int64_t wanted = std::clamp<std::int64_t>((total + kSegmentKeys - 1) / kSegmentKeys, 1, kMaxSegments);
  const std::int64_t segment_keys = lanes16((total + wanted - 1) / wanted);
  const std::int64_t segments = (total + segment_keys - 1) / segment_keys;

  Scratch& s = scratch;
  s.q.resize(static_cast<std::size_t>(n * H * q_floats));
  s.state.resize(static_cast<std::size_t>(segments * n * H * state_floats));
  s.merged.resize(static_cast<std::size_t>(n * H * (state_floats - kStateO)));
  s.lse.resize(static_cast<std::size_t>(n * H));
  rotate_and_append(plan, cache, cache_length, tokens, isa, q_floats, s.q.data());

  std::int64_t visible_end[kMaxAttentionTokens];
  std::int64_t query_positions[kMaxAttentionTokens];
  for (std::int64_t i = 0; i < n; ++i) {
    visible_end[i] = p.mask == AttentionMask::causal ? cache_length + i + 1 : total;
    query_positions[i] = tokens.positions[i * p.position_axes()];
  }
  const auto cs = static_cast<std::ptrdiff_t>(size_of(cache.dtype));
  const double cache_bytes =
      static_cast<double>(total) * static_cast<double>(G * (p.head_dim + p.value_dim)) * static_cast<double>(cs);
  AttendItem item{cache.dtype,
                  static_cast<const char*>(cache.k),
                  static_cast<const char*>(cache.v),
                  cache.k_token_stride * cs,
                  cache.k_head_stride * cs,
                  cache.v_token_stride * cs,
                  cache.v_head_stride * cs,
                  p.head_dim,
                  p.value_dim,
                  H,
                  H / G,
                  0,
                  0,
                  0,
                  0,
                  n,
                  visible_end,
                  s.q.data(),
                  q_floats,
                  plan.scale(),
                  p.alibi ? plan.negated_slopes().data() : nullptr,
                  query_positions,
                  cache.positions,
                  p.alibi && p.alibi->mode == AlibiMode::symmetric,
                  nullptr,
                  state_floats,
                  prefetch_keys(cache_bytes)};
  // Items: each segment for each group of KV heads, segment by segment (a thread's run of items
  // then reads the cache in address order). More threads split the heads into groups where the
  // segments alone are too few to share; the results do not depend on the grouping.
  const std::int64_t groups =
      options.threads == 1 ? 1 : std::clamp<std::int64_t>((kItemsPerThread * options.threads + segments - 1) / segments, 1, G);
  const std::int64_t items = segments * groups;
  const std::int64_t segment_floats = n * H * state_floats;
  detail::share_pieces(items, options.threads, 1, [&](auto next) {
    std::int64_t begin = 0, end = 0;
    while (next(begin, end)) {
      for (std::int64_t i = begin; i < end; ++i) {
        AttendItem it = item;
        const std::int64_t segment = i / groups, group = i % groups;
        it.key_begin = segment * segment_keys;
        it.key_end = std::min(total, it.key_begin + segment_keys);
        it.kv_begin = G * group / groups;
        it.kv_end = G * (group + 1) / groups;
        it.state = s.state.data() + segment * segment_floats;
        kernels.attend(it);
      }
    }
  });
  const std::int64_t out_floats = state_floats - kStateO;
  kernels.attend_merge(AttendMerge{s.state.data(), segments, n * H, state_floats, p.value_dim, s.merged.data(),
                                   out_floats, s.lse.data()});
  const auto ts = static_cast<std::int64_t>(size_of(tokens.dtype));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t h = 0; h < H; ++h) {
      char* row = static_cast<char*>(tokens.out) + (i * tokens.out_token_stride + h * tokens.out_head_stride) * ts;
      const float* from = s.merged.data() + (i * H + h) * out_floats;
      for (std::int64_t e = 0; e < p.value_dim; ++e) detail::store(tokens.dtype, row, e, from[e]);
      if (tokens.lse) detail::store(tokens.dtype, tokens.lse, i * H + h, s.lse[static_cast<std::size_t>(i * H + h)]);
    }
  }
}

}  // namespace posenc::fast
