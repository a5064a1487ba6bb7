#include "posenc/models/hf_rope_dict.hpp"

#include <cmath>

#include "posenc/errors.hpp"

namespace posenc::models {
namespace {

// The rope_type transformers names each scaling by (ROPE_INIT_FUNCTIONS).
const char* rope_type(const RopeParams& p) {
  if (p.partial == PartialRotary::proportional) return "proportional";
  switch (p.scaling.kind) {
    case RopeScalingKind::none: return "default";
    case RopeScalingKind::linear: return "linear";
    case RopeScalingKind::dynamic: return "dynamic";
    case RopeScalingKind::yarn: return "yarn";
    case RopeScalingKind::llama3: return "llama3";
    case RopeScalingKind::longrope: return "longrope";
    case RopeScalingKind::ntk: break;
  }
  throw InvalidParameter("rope.scaling.kind", "'ntk'", "a scaling transformers has a rope_type for (not ntk)");
}

// The partial_rotary_factor f with int(head_dim * f) == rotary_dim, HF's truncation: the nearest
// double to rotary_dim / head_dim can multiply back to just below rotary_dim, so it is raised by
// ulps until it reads back.
double partial_factor(std::int64_t rotated, std::int64_t head_dim) {
  double f = static_cast<double>(rotated) / static_cast<double>(head_dim);
  while (static_cast<std::int64_t>(static_cast<double>(head_dim) * f) < rotated) f = std::nextafter(f, 2.0);
  return f;
}

template <class T>
void put(nlohmann::ordered_json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

nlohmann::ordered_json hf_rope_config(const RopeParams& p) {
  // seq_len is not written, so it need not be set (read_hf_config leaves it empty).
  RopeParams check = p;
  const bool by_length = p.scaling.kind == RopeScalingKind::dynamic || p.scaling.kind == RopeScalingKind::longrope;
  if (by_length && !check.scaling.seq_len) check.scaling.seq_len = check.scaling.original_max_positions.value_or(1);
  validate(check);
  if (p.inverse) throw InvalidParameter("rope.inverse", "true", "false: a Llama-style config has no backward-pass rotation");
  const RopeScaling& s = p.scaling;
  nlohmann::ordered_json rope;
  rope["rope_type"] = rope_type(p);
  rope["rope_theta"] = p.base;
  // Proportional RoPE too: int(partial_rotary_factor * head_dim // 2) pairs rotate.
  if (p.rotary_dim != p.head_dim) rope["partial_rotary_factor"] = partial_factor(p.rotary_dim, p.head_dim);
  put(rope, "factor", s.factor);
  put(rope, "original_max_position_embeddings", s.original_max_positions);
  put(rope, "beta_fast", s.beta_fast);
  put(rope, "beta_slow", s.beta_slow);
  put(rope, "mscale", s.mscale);
  put(rope, "mscale_all_dim", s.mscale_all_dim);
  put(rope, "attention_factor", s.attention_factor);
  put(rope, "truncate", s.truncate);
  put(rope, "low_freq_factor", s.low_freq_factor);
  put(rope, "high_freq_factor", s.high_freq_factor);
  if (!s.short_factor.empty()) rope["short_factor"] = s.short_factor;
  if (!s.long_factor.empty()) rope["long_factor"] = s.long_factor;
  if (!p.mrope_section.empty()) rope["mrope_section"] = p.mrope_section;

  nlohmann::ordered_json out;
  out["head_dim"] = p.head_dim;
  // HF dynamic NTK takes its original length from max_position_embeddings.
  if (s.kind == RopeScalingKind::dynamic) {
    out["max_position_embeddings"] = *s.original_max_positions;
    rope.erase("original_max_position_embeddings");
  }
  if (p.layout == RopeLayout::interleaved) out["rope_interleave"] = true;
  out["rope_parameters"] = std::move(rope);
  return out;
}

}  // namespace posenc::models
