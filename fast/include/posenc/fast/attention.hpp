#pragma once
// posenc fast: decode attention over a KV cache, with RoPE or ALiBi inside (SPEC.md section 2.7).
//
// One call takes a step's new tokens (one, or a small block): it rotates their keys with the
// attention's RopePlan and appends them and their values to the cache (what an inference engine
// does every step), rotates the queries, and computes for each query token and query head
//   O = softmax(scale q'.k'_j + bias_j) V over the keys it sees, and L = the log-sum-exp,
// with an online softmax in binary32 and P V in binary32, whatever the storage format.
//
// Accuracy contract (`posenc conform --impl fast --profile strict`, SPEC.md section 5,
// "Attention"): the rotations are fast.hpp's (every scaling, |position| <= 2^32), the keys stored
// rotated in the cache's format, the query kept in binary32; each dot product, softmax step and
// sum is one of the rounded steps the SPEC's model of a careful kernel bounds.
//
// Threads split the keys into segments and the KV heads into groups; each segment's partial
// softmax is merged with the others in a fixed order. The segments depend on the keys alone, so
// the outputs are bit-identical across thread counts and across the three ISA paths (docs/fast.md,
// "Attention").
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/fast/fast.hpp"
#include "posenc/params/attention.hpp"

namespace posenc::fast {

// At most this many new tokens per call: a decode step, or a short block (speculative drafts, a
// chunk of a prefill). Each query row keeps a partial softmax per segment of keys; a longer
// prefill goes in blocks of calls.
inline constexpr std::int64_t kMaxAttentionTokens = 16;

// An attention configuration derived once (as RopePlan for RoPE): the parameters validated, the
// RoPE plan built from them, the softmax scale and the ALiBi slopes rounded to binary32. The
// decode kernel offers the masks `causal` (each new token sees the cache and the new tokens up to
// itself) and `none` (every new token sees every key); an explicit mask and a given cos/sin table
// are refused, naming the parameter.
class AttentionPlan {
 public:
  explicit AttentionPlan(const AttentionParams& params);
  const AttentionParams& params() const { return params_; }
  // The RoPE plan the call rotates q and the new keys with; null when the attention has none.
  const RopePlan* rope() const { return rope_ ? &*rope_ : nullptr; }
  // The softmax scale (SPEC 2.7: `scale`, else 1/sqrt(scale_denominator or head_dim), times
  // g(factor, scale_mscale_all_dim)^2), derived in long double and rounded to binary32.
  float scale() const { return scale_; }
  // -slope of each query head (binary32; the bias is -slope * distance), empty without ALiBi.
  std::span<const float> negated_slopes() const { return negated_slopes_; }

 private:
  AttentionParams params_;
  std::optional<RopePlan> rope_;
  float scale_ = 1;
  std::vector<float> negated_slopes_;
};

// The KV cache: slot j holds key j (stored rotated) and value j, [capacity][kv_heads][head_dim]
// and [capacity][kv_heads][value_dim], strides in elements, in `dtype`. `positions` holds each
// slot's position on the first axis: ALiBi's key positions (required with ALiBi, else may be
// null); the call writes its new tokens' there as it writes their keys and values.
struct KvCache {
  DType dtype = DType::f32;
  void* k = nullptr;
  void* v = nullptr;
  std::int64_t capacity = 0;
  std::int64_t k_token_stride = 0, k_head_stride = 0;
  std::int64_t v_token_stride = 0, v_head_stride = 0;
  std::int64_t* positions = nullptr;
};

// A call's new tokens. q [count][query_heads][head_dim] and the outputs O
// [count][query_heads][value_dim] in `dtype`; the new keys and values k [count][kv_heads][head_dim]
// and v [count][kv_heads][value_dim] in the cache's dtype (as the projection that fills the cache
// gives them; each may be the cache's own slots, same address and strides: then it is rotated or
// kept in place). positions: count x the rope's position axes (1 without RoPE). lse, if set:
// L [count][query_heads] in binary32 (natural log).
struct AttentionTokens {
  DType dtype = DType::f32;
  std::int64_t count = 0;
  const std::int64_t* positions = nullptr;
  const void* q = nullptr;
  std::int64_t q_token_stride = 0, q_head_stride = 0;
  const void* k = nullptr;
  std::int64_t k_token_stride = 0, k_head_stride = 0;
  const void* v = nullptr;
  std::int64_t v_token_stride = 0, v_head_stride = 0;
  void* out = nullptr;
  std::int64_t out_token_stride = 0, out_head_stride = 0;
  void* lse = nullptr;
};

// One decode step over the cache, whose slots [0, cache_length) hold the earlier keys and values:
// tokens.count new ones go to slots [cache_length, cache_length + count) (rotated at their
// positions), then each new token t attends, under `causal`, to slots [0, cache_length + t] and,
// under `none`, to all of [0, cache_length + count). Every argument (strides, head counts,
// overlaps, capacity, positions: RoPE's |p| <= 2^32, ALiBi's [0, 2^53] with no visible key after
// its query in causal mode) is checked before anything is read or written, and a bad one is
// refused naming it (InvalidParameter). Options: threads (segments of keys and groups of KV heads
// shared by the calling thread and the workers; the outputs do not depend on the count) and isa.
void attention_decode(const AttentionPlan& plan, const KvCache& cache, std::int64_t cache_length,
                      const AttentionTokens& tokens, const Options& options = {});

}  // namespace posenc::fast
