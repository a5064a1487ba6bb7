#pragma once
// The RoPE parameters of published model configs that several vector files use (one definition
// each; the config.json each comes from is named).
#include <vector>

#include "posenc/params.hpp"

namespace posenc::generator::published {

// meta-llama/Llama-3.1-8B: head_dim 128, rope_theta 500000, llama3 factor 8, low_freq_factor 1,
// high_freq_factor 4, original_max_position_embeddings 8192.
RopeParams llama31_8b();
// deepseek-ai/DeepSeek-V2: qk_rope_head_dim 64, rope_theta 10000, yarn factor 40, original 4096,
// beta_fast 32, beta_slow 1, mscale = mscale_all_dim = 0.707.
RopeParams deepseek_v2();
// openai/gpt-oss: head_dim 64, rope_theta 150000, yarn factor 32, original 4096, beta 32/1,
// truncate false.
RopeParams gpt_oss();
// microsoft/Phi-3-vision-128k-instruct: head_dim 96, rope_theta 10000, LongRoPE ("su") with its
// short and long factors, original 4096, factor 32 (max_position_embeddings 131072 / 4096).
RopeParams phi3_longrope(std::int64_t seq_len);
// Qwen/Qwen2-VL-7B-Instruct: head_dim 128, rope_theta 1000000, mrope_section [16, 24, 24].
RopeParams qwen2_vl();

}  // namespace posenc::generator::published
