#pragma once
// A Hugging Face model's config.json read into posenc's RopeParams the way transformers reads it
// (src/transformers/modeling_rope_utils.py: standardize_rope_params, the _validate_*_rope_parameters
// checks and the _compute_*_parameters functions; and the model files whose RoPE differs:
// modeling_gptj, modeling_gpt_neox, modeling_deepseek_v3, modeling_qwen2_vl). The mapping, key by
// key, is docs/hf_configs.md (linked from conformance/SPEC.md section 2.4.1).
//
// Every key transformers would read for the model's RoPE is read. RoPE-related keys posenc does
// not read are listed in `unread` (the CLI prints them as notes), never dropped silently. An
// invalid value throws InvalidParameter naming the config key ("hf_config.rope_scaling.factor"),
// the value as the file spells it and the allowed range.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "posenc/params/rope.hpp"

namespace posenc::models {

struct HfRopeConfig {
  // The model's RoPE, validated. For the dynamic and longrope scalings scaling.seq_len is empty:
  // it is a forward's length (Hugging Face: max(position_ids) + 1), not part of the config; set
  // it before use (needs_seq_len()).
  RopeParams params;
  std::string model_type;                   // "" when the config names none
  // The config's top-level "_name_or_path" (the model's Hub repository, e.g.
  // "meta-llama/Llama-3.1-8B", or the folder it was saved from), when it has one.
  std::optional<std::string> name_or_path;
  std::int64_t max_position_embeddings = 0;  // the context the config declares (0: not given)
  // RoPE-related keys posenc does not read, each with why (e.g. "rope_local_base_freq = 10000:
  // the sliding-window layers' base; posenc reads the full-attention layers' RoPE").
  std::vector<std::string> unread;

  bool needs_seq_len() const;
};

// Reads a parsed config.json. A multimodal config's RoPE is its text_config's.
HfRopeConfig read_hf_config(const nlohmann::json& config);
// Reads the file; an unreadable file or invalid JSON throws posenc::Error naming the path.
HfRopeConfig read_hf_config_file(const std::filesystem::path& path);

}  // namespace posenc::models
