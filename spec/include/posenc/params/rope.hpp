#pragma once
// Rotary position embedding (Su et al. 2021, "RoFormer", arXiv:2104.09864) and its
// context-extension scalings. Every real parameter is an exact binary64 value, as a model config
// parses it; the reference computes the exact real-number math on those values.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace posenc {

enum class RopeLayout {
  interleaved,  // pairs (2i, 2i+1): GPT-J, RoFormer, the seed 003 code
  half,         // pairs (i, i + n/2), n the rotated span: GPT-NeoX, Hugging Face rotate_half
};

enum class PartialRotary {
  // Frequencies over rotary_dim; pairs within the first rotary_dim dims; dims >= rotary_dim pass
  // through unchanged (GPT-NeoX rotary_pct, GPT-J rotary_dim, HF partial_rotary_factor).
  standard,
  // Hugging Face "proportional" RoPE (Gemma p-RoPE, _compute_proportional_rope_parameters):
  // exponent over the full head_dim, pairs across the whole head, and zero frequency for pairs
  // i >= rotary_dim/2 (they rotate by angle 0).
  proportional,
};

enum class RopeScalingKind {
  none,
  linear,    // position interpolation (Chen et al. 2023, arXiv:2306.15595): w_i / factor
  ntk,       // NTK-aware (bloc97, 2023): base' = base * factor^(d/(d-2))
  dynamic,   // HF dynamic NTK (_compute_dynamic_ntk_parameters): base grows with seq_len
  yarn,      // YaRN (Peng et al. 2023, arXiv:2309.00071) as in HF _compute_yarn_parameters
  llama3,    // Llama 3.1 (Meta; HF _compute_llama3_parameters)
  longrope,  // LongRoPE (Ding et al. 2024, arXiv:2402.13753) as in HF _compute_longrope_parameters
};

// Scaling parameters. A field that the chosen kind does not use must stay empty: nothing is
// silently ignored. Fields the kind needs and has no published default for are required.
struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::none;
  std::optional<double> factor;                      // linear, ntk (alpha), dynamic, yarn, llama3, longrope
  std::optional<std::int64_t> original_max_positions;  // dynamic, yarn, llama3, longrope
  std::optional<std::int64_t> seq_len;               // dynamic, longrope: current sequence length
  std::optional<double> beta_fast;                   // yarn, default 32
  std::optional<double> beta_slow;                   // yarn, default 1
  std::optional<bool> truncate;                      // yarn, default true
  std::optional<double> mscale;                      // yarn (DeepSeek-V2)
  std::optional<double> mscale_all_dim;              // yarn (DeepSeek-V2)
  std::optional<double> attention_factor;            // yarn, longrope: overrides the derived one
  std::optional<double> low_freq_factor;             // llama3
  std::optional<double> high_freq_factor;            // llama3
  std::vector<double> short_factor;                  // longrope: rotary_dim/2 entries
  std::vector<double> long_factor;                   // longrope: rotary_dim/2 entries

  double yarn_beta_fast() const { return beta_fast.value_or(32.0); }
  double yarn_beta_slow() const { return beta_slow.value_or(1.0); }
  bool yarn_truncate() const { return truncate.value_or(true); }

  // Equal when every field holds the same value (reals as numbers: +0 equals -0).
  friend bool operator==(const RopeScaling&, const RopeScaling&) = default;
};

struct RopeParams {
  std::int64_t head_dim = 0;    // even, >= 2
  std::int64_t rotary_dim = 0;  // even, [2, head_dim]
  double base = 10000.0;        // finite, > 1
  RopeLayout layout = RopeLayout::interleaved;
  PartialRotary partial = PartialRotary::standard;
  bool inverse = false;  // rotate by -angle (the backward pass)
  // M-RoPE (Qwen2-VL): pair i takes its position from axis a where section a holds index i.
  // Empty: one position axis. Otherwise the counts sum to rotary_dim/2.
  std::vector<std::int64_t> mrope_section;
  RopeScaling scaling;

  // Inline: the fast path asks for these on every call and token.
  // Pairs the rotation acts on: rotary_dim/2, or head_dim/2 for the proportional convention.
  std::int64_t pair_count() const { return rotated_span() / 2; }
  // Length of the rotated prefix: rotary_dim, or head_dim for the proportional convention.
  std::int64_t rotated_span() const { return partial == PartialRotary::proportional ? head_dim : rotary_dim; }
  // Number of position coordinates each token carries (1 unless M-RoPE).
  std::int64_t position_axes() const {
    return mrope_section.empty() ? 1 : static_cast<std::int64_t>(mrope_section.size());
  }
  // Index of the element pair (first, second) that pair i rotates.
  std::int64_t pair_first(std::int64_t i) const;
  std::int64_t pair_second(std::int64_t i) const;
  // Axis of the position that pair i uses.
  std::int64_t pair_axis(std::int64_t i) const;

  friend bool operator==(const RopeParams&, const RopeParams&) = default;
};

void validate(const RopeParams& p);
// One position per axis; any int64 value (negative positions are allowed: relative offsets).
void validate_rope_positions(const RopeParams& p, std::span<const std::int64_t> positions);

std::string_view to_string(RopeLayout v);
std::string_view to_string(PartialRotary v);
std::string_view to_string(RopeScalingKind v);
RopeLayout parse_rope_layout(std::string_view s);
PartialRotary parse_partial_rotary(std::string_view s);
RopeScalingKind parse_rope_scaling_kind(std::string_view s);

}  // namespace posenc
