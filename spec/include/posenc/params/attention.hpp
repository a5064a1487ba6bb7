#pragma once
// Scaled dot-product attention with a positional encoding inside (SPEC.md section 2.7):
// for query row i and key/value rows j of one head,
//   s_ij = scale * q'_i . k'_j + b_ij,  O_i = sum_j softmax_j(s_ij) v_j,  L_i = ln sum_j exp(s_ij)
// over the keys row i sees, q' and k' being q and k rotated by RoPE at their own positions (or
// not rotated) and b ALiBi's bias (or 0). Vaswani et al. 2017, "Attention Is All You Need", eq. 1;
// grouped-query attention: Ainslie et al. 2023, arXiv:2305.13245.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "posenc/params/alibi.hpp"
#include "posenc/params/rope.hpp"

namespace posenc {

enum class AttentionMask {
  none,      // every query row sees every key
  causal,    // bottom-right aligned: row i of n_q sees keys 0 .. i + (n_k - n_q)
  explicit_, // the case's own [queries][keys] mask
};

struct AttentionParams {
  std::int64_t head_dim = 0;     // width of q and k: [1, 2^16]; rope's head_dim when rotated
  std::int64_t value_dim = 0;    // width of v and O: [1, 2^16]
  std::int64_t query_heads = 0;  // [1, 2^12]
  // [1, query_heads], dividing it: query head h reads KV head h / (query_heads / kv_heads), the
  // contiguous groups of Hugging Face's repeat_kv and FlashAttention's GQA.
  std::int64_t kv_heads = 0;
  std::optional<RopeParams> rope;  // q and k rotated at their positions; absent: not rotated
  // The rotation's cos/sin rows are inputs of the case (one per query, then one per key), in
  // rope_table's layout, instead of computed: a kernel that takes its table as an argument
  // (FlashAttention's rotary_cos/rotary_sin) is judged on its own arithmetic.
  bool rope_table_given = false;
  std::optional<AlibiParams> alibi;  // bias per query head; n_heads == query_heads
  AttentionMask mask = AttentionMask::none;
  // The softmax scale. `scale`: an exact binary64 value. Absent: 1/sqrt(scale_denominator), the
  // exact real, with scale_denominator head_dim when absent (Gemma's query_pre_attn_scalar).
  std::optional<double> scale;
  std::optional<double> scale_denominator;
  // DeepSeek-V2's softmax-scale correction (modeling_deepseek_v2, yarn_get_mscale): the scale
  // times g(s, mscale_all_dim)^2, g of SPEC.md section 2.4's YaRN and s the rope scaling factor.
  std::optional<double> scale_mscale_all_dim;

  std::int64_t group_size() const { return query_heads / kv_heads; }
  std::int64_t kv_head(std::int64_t query_head) const { return query_head / group_size(); }
  // Position coordinates per token: the rope's axes, else 1.
  std::int64_t position_axes() const { return rope ? rope->position_axes() : 1; }

  friend bool operator==(const AttentionParams&, const AttentionParams&) = default;
};

// One attention problem's inputs, row-major.
struct AttentionInputs {
  std::int64_t queries = 0, keys = 0;
  std::span<const std::int64_t> query_positions;  // [queries][position_axes]
  std::span<const std::int64_t> key_positions;    // [keys][position_axes]
  std::span<const double> q;                      // [queries][query_heads][head_dim]
  std::span<const double> k;                      // [keys][kv_heads][head_dim]
  std::span<const double> v;                      // [keys][kv_heads][value_dim]
  std::span<const std::uint8_t> mask;             // explicit mask: [queries][keys], 1 = visible
  std::span<const double> table;                  // rope_table_given: [queries + keys][2 pairs]
};

void validate(const AttentionParams& p);
// The parameters and the problem's size: queries in [1, 2^16], keys in [1, 2^24] (a caller with
// strided tensors checks these before reading them).
void validate(const AttentionParams& p, std::int64_t queries, std::int64_t keys);
// Sizes, values, positions and the mask: every row must see at least one key (a softmax over
// nothing is undefined), and causal ALiBi needs no visible key after its query.
void validate(const AttentionParams& p, const AttentionInputs& in);

// Whether query row i sees key j (valid parameters and inputs).
bool attention_visible(const AttentionParams& p, const AttentionInputs& in, std::int64_t i, std::int64_t j);
// Number of outputs: O ([queries][query_heads][value_dim]) then L ([queries][query_heads]).
std::int64_t attention_outputs(const AttentionParams& p, std::int64_t queries);
// Output j's name: "O[query 0, head 3, column 17]" or "L[query 0, head 3]" (valid parameters).
std::string attention_output_name(const AttentionParams& p, std::int64_t queries, std::size_t j);

std::string_view to_string(AttentionMask v);
AttentionMask parse_attention_mask(std::string_view s);

}  // namespace posenc
