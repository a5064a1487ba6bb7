#pragma once
// posenc's RopeParams written back as a Hugging Face-style config fragment, the inverse of
// read_hf_config: {"head_dim", "rope_parameters": {"rope_type", "rope_theta", ...}} in the key
// names of transformers' modeling_rope_utils.py (RopeParameters), so that code written against
// transformers (a Python helper, a test) can build its rotary embedding from a posenc case.
// read_hf_config of the result gives back the same parameters (tests/unit/hf_config_test.cpp).
#include <nlohmann/json.hpp>

#include "posenc/params/rope.hpp"

namespace posenc::models {

// Throws InvalidParameter for what a config cannot say: the backward-pass rotation (rope.inverse)
// and a scaling transformers has no rope_type for (ntk). seq_len is a forward's length, not a
// config key, and is not written. The interleaved layout is written as "rope_interleave": true,
// the key DeepSeek-V3's config uses for it (Llama-style models have no layout key: rotate_half).
nlohmann::ordered_json hf_rope_config(const RopeParams& p);

}  // namespace posenc::models
