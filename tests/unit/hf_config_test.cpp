// read_hf_config on published configs (tests/data/hf_configs), each compared with RoPE parameters
// written here from the config's own numbers (not from the reader), and its errors and reports.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "posenc/errors.hpp"
#include "posenc/models/hf_config.hpp"
#include "posenc/models/hf_rope_dict.hpp"

namespace posenc::models {
namespace {

HfRopeConfig read(const std::string& name) { return read_hf_config_file(std::string(POSENC_HF_CONFIGS) + "/" + name); }

RopeParams rope(std::int64_t head_dim, std::int64_t rotary_dim, double base, RopeLayout layout) {
  RopeParams p;
  p.head_dim = head_dim;
  p.rotary_dim = rotary_dim;
  p.base = base;
  p.layout = layout;
  return p;
}

TEST(HfConfig, Llama31_8B) {
  auto c = read("llama-3.1-8b.json");
  auto p = rope(128, 128, 500000.0, RopeLayout::half);  // 4096 / 32 heads
  p.scaling.kind = RopeScalingKind::llama3;
  p.scaling.factor = 8.0;
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 4.0;
  p.scaling.original_max_positions = 8192;
  EXPECT_EQ(c.params, p);
  EXPECT_EQ(c.max_position_embeddings, 131072);
  EXPECT_TRUE(c.unread.empty());
}

TEST(HfConfig, Llama32_1B) {
  auto c = read("llama-3.2-1b.json");
  auto p = rope(64, 64, 500000.0, RopeLayout::half);
  p.scaling.kind = RopeScalingKind::llama3;
  p.scaling.factor = 32.0;
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 4.0;
  p.scaling.original_max_positions = 8192;
  EXPECT_EQ(c.params, p);
}

TEST(HfConfig, Mistral7Bv02) {
  auto c = read("mistral-7b-instruct-v0.2.json");
  EXPECT_EQ(c.params, rope(128, 128, 1e6, RopeLayout::half));
  EXPECT_EQ(c.max_position_embeddings, 32768);
}

TEST(HfConfig, Qwen25_7B_Yarn4x) {
  auto c = read("qwen2.5-7b-instruct-yarn.json");
  auto p = rope(128, 128, 1e6, RopeLayout::half);  // 3584 / 28
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 4.0;
  p.scaling.original_max_positions = 32768;
  EXPECT_EQ(c.params, p);
}

TEST(HfConfig, Qwen2VL_7B_Mrope) {
  auto c = read("qwen2-vl-7b-instruct.json");
  auto p = rope(128, 128, 1e6, RopeLayout::half);
  p.mrope_section = {16, 24, 24};
  EXPECT_EQ(c.params, p);
}

TEST(HfConfig, DeepSeekV3) {
  auto c = read("deepseek-v3.json");
  auto p = rope(64, 64, 10000.0, RopeLayout::interleaved);  // qk_rope_head_dim, rope_interleave default
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 40.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.beta_fast = 32.0;
  p.scaling.beta_slow = 1.0;
  p.scaling.mscale = 1.0;
  p.scaling.mscale_all_dim = 1.0;
  EXPECT_EQ(c.params, p);
  EXPECT_EQ(c.max_position_embeddings, 163840);
}

TEST(HfConfig, GptOss20B) {
  auto c = read("gpt-oss-20b.json");
  auto p = rope(64, 64, 150000.0, RopeLayout::half);
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 32.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.beta_fast = 32.0;
  p.scaling.beta_slow = 1.0;
  p.scaling.truncate = false;
  EXPECT_EQ(c.params, p);
}

TEST(HfConfig, Phi35Mini_LongRope) {
  auto c = read("phi-3.5-mini-instruct.json");
  auto p = rope(96, 96, 10000.0, RopeLayout::half);  // 3072 / 32
  p.scaling.kind = RopeScalingKind::longrope;
  p.scaling.factor = 32.0;  // 131072 / 4096 (no factor key)
  p.scaling.original_max_positions = 4096;
  EXPECT_EQ(c.params.scaling.short_factor.size(), 48u);
  EXPECT_EQ(c.params.scaling.short_factor.front(), 1.0);
  EXPECT_EQ(c.params.scaling.short_factor.back(), 2.8399994373321533);
  EXPECT_EQ(c.params.scaling.long_factor.front(), 1.0800000429153442);
  EXPECT_EQ(c.params.scaling.long_factor.back(), 64.83999633789062);
  p.scaling.short_factor = c.params.scaling.short_factor;
  p.scaling.long_factor = c.params.scaling.long_factor;
  EXPECT_EQ(c.params, p);
  EXPECT_TRUE(c.needs_seq_len());
}

TEST(HfConfig, Phi2_Partial) {
  auto c = read("phi-2.json");
  EXPECT_EQ(c.params, rope(80, 32, 10000.0, RopeLayout::half));  // int(80 * 0.4)
}

TEST(HfConfig, GptNeoX20B) {
  auto c = read("gpt-neox-20b.json");
  EXPECT_EQ(c.params, rope(96, 24, 10000.0, RopeLayout::half));  // 6144 / 64, 0.25
  EXPECT_EQ(c.max_position_embeddings, 2048);
}

TEST(HfConfig, GptJ6B) {
  auto c = read("gpt-j-6b.json");
  EXPECT_EQ(c.params, rope(256, 64, 10000.0, RopeLayout::interleaved));  // 4096 / 16
  EXPECT_EQ(c.max_position_embeddings, 2048);
}

TEST(HfConfig, Gemma7B_HeadDim) {
  auto c = read("gemma-7b.json");
  EXPECT_EQ(c.params, rope(256, 256, 10000.0, RopeLayout::half));
}

nlohmann::json llama() {
  return nlohmann::json::parse(R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    "max_position_embeddings": 131072, "rope_theta": 500000.0})");
}

// The error's message, or "" when none is thrown.
std::string error_of(const nlohmann::json& j) {
  try {
    read_hf_config(j);
  } catch (const InvalidParameter& e) {
    return e.what();
  }
  return "";
}

TEST(HfConfigErrors, NameTheKeyTheValueAndTheRange) {
  auto j = llama();
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", -8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0}};
  EXPECT_EQ(error_of(j), "invalid hf_config.rope_scaling.factor (posenc rope.scaling.factor) = -8: must be finite and > 0");
  j["rope_scaling"].erase("factor");
  EXPECT_EQ(error_of(j), "invalid hf_config.rope_scaling.factor = (missing): must be set for rope_type 'llama3'");
  j = llama();
  j["rope_scaling"] = {{"rope_type", "ntk-by-parts"}, {"factor", 2.0}};
  EXPECT_NE(error_of(j).find("invalid hf_config.rope_scaling.rope_type = \"ntk-by-parts\": must be one of default"),
            std::string::npos);
  j = llama();
  j["rope_theta"] = "500000";
  EXPECT_EQ(error_of(j), "invalid hf_config.rope_theta = \"500000\": must be a number");
  j = llama();
  j.erase("num_attention_heads");
  EXPECT_NE(error_of(j).find("invalid hf_config.num_attention_heads = (missing)"), std::string::npos);
  j = llama();
  j["hidden_size"] = 4097;
  EXPECT_EQ(error_of(j), "invalid hf_config.hidden_size = 4097: must be a multiple of num_attention_heads (32)");
  j = llama();
  j["partial_rotary_factor"] = 0.3;  // int(128 * 0.3) = 38: even, fine; 0.33 gives 42; 0.35 gives 44.
  EXPECT_EQ(error_of(j), "");
  j["partial_rotary_factor"] = 0.1;  // int(12.8) = 12; 0.11 -> int(14.08) = 14; 0.15 -> 19, odd
  j["partial_rotary_factor"] = 0.15;
  EXPECT_EQ(error_of(j),
            "invalid hf_config.partial_rotary_factor (posenc rope.rotary_dim) = 19: must be an even integer >= 2");
  j = llama();
  j["rope_theta"] = 0.5;
  EXPECT_EQ(error_of(j), "invalid hf_config.rope_theta (posenc rope.base) = 0.5: must be finite and > 1");
  j = llama();
  j["rope_scaling"] = {{"type", "linear"}, {"rope_type", "dynamic"}, {"factor", 2.0}};
  EXPECT_EQ(error_of(j), "invalid hf_config.rope_scaling.type = \"linear\": must be absent, or equal to rope_type ('dynamic')");
  j = llama();
  j["rope_scaling"] = {{"type", "mrope"}, {"mrope_section", {16, 24, 20}}};
  EXPECT_EQ(error_of(j), "invalid hf_config.rope_scaling.mrope_section (posenc rope.mrope_section) = (sum 60): must be "
                         "sections summing to rotary_dim/2 = 64");
}

TEST(HfConfigErrors, UnknownFieldsAreReported) {
  auto j = llama();
  j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}, {"beta_fast", 32}};
  j["rope_local_base_freq"] = 10000.0;
  auto c = read_hf_config(j);
  ASSERT_EQ(c.unread.size(), 2u);
  EXPECT_EQ(c.unread[0], "rope_local_base_freq = 10000.0: the sliding-window layers' base (Gemma 3); posenc reads the "
                         "full-attention layers' RoPE");
  EXPECT_EQ(c.unread[1], "rope_scaling.beta_fast = 32: not used by rope_type 'linear' (transformers warns 'Unrecognized keys')");
  j = llama();
  j["model_type"] = "my_llama";
  EXPECT_EQ(read_hf_config(j).unread.at(0),
            "model_type = \"my_llama\": not a model type verified against transformers 5.25.0 (docs/models.md); "
            "read as a Llama-style model (rotate_half: half layout)");
}

TEST(HfConfig, InterleavedModelTypes) {
  // modeling_cohere and modeling_glm4 rotate pairs (2i, 2i+1); GLM-4 over its partial span.
  nlohmann::json j = {{"model_type", "cohere"}, {"hidden_size", 8192}, {"num_attention_heads", 64},
                      {"rope_theta", 8e6}, {"max_position_embeddings", 131072}};
  auto c = read_hf_config(j);
  EXPECT_EQ(c.params, rope(128, 128, 8e6, RopeLayout::interleaved));
  EXPECT_TRUE(c.unread.empty());
  j = {{"model_type", "glm4"}, {"hidden_size", 4096}, {"num_attention_heads", 32}, {"head_dim", 128},
       {"partial_rotary_factor", 0.5}, {"rope_theta", 10000.0}, {"max_position_embeddings", 32768}};
  EXPECT_EQ(read_hf_config(j).params, rope(128, 64, 10000.0, RopeLayout::interleaved));
}

TEST(HfConfig, BackwardRotationModelTypes) {
  // modeling_nanochat's rotate_half returns cat((x2, -x1)): a rotation by -t, posenc's inverse.
  nlohmann::json j = {{"model_type", "nanochat"}, {"hidden_size", 1024}, {"num_attention_heads", 16},
                      {"rope_theta", 10000.0}, {"max_position_embeddings", 2048}};
  auto p = rope(64, 64, 10000.0, RopeLayout::half);
  p.inverse = true;
  EXPECT_EQ(read_hf_config(j).params, p);
  j["model_type"] = "llama";
  EXPECT_EQ(read_hf_config(j).params, rope(64, 64, 10000.0, RopeLayout::half));
}

TEST(HfConfig, QueryTemperatureAfterRopeIsReported) {
  // modeling_ministral3: q times 1 + beta * ln(1 + floor(p / L0)) after RoPE, not RoPE itself.
  nlohmann::json j = {{"model_type", "ministral3"}, {"hidden_size", 5120}, {"num_attention_heads", 32},
                      {"head_dim", 128}, {"max_position_embeddings", 262144},
                      {"rope_parameters", {{"rope_type", "yarn"}, {"rope_theta", 1e6}, {"factor", 16.0},
                                           {"original_max_position_embeddings", 16384}, {"beta_fast", 32.0},
                                           {"beta_slow", 1.0}, {"llama_4_scaling_beta", 0.1}}}};
  const auto c = read_hf_config(j);
  EXPECT_EQ(c.params.scaling.kind, RopeScalingKind::yarn);
  const std::string note =
      "rope_parameters.llama_4_scaling_beta = 0.1: the attention multiplies the queries after RoPE by 1 + "
      "llama_4_scaling_beta * ln(1 + floor(position / original_max_position_embeddings)) "
      "(get_llama_4_attn_scale): a query temperature posenc's vectors do not express";
  EXPECT_NE(std::find(c.unread.begin(), c.unread.end(), note), c.unread.end());
  for (const auto& u : c.unread) EXPECT_EQ(u.find("not used by rope_type"), std::string::npos) << u;
}

TEST(HfConfig, ClassDefaultsOfTheRegistryFillOmittedKeys) {
  // save_pretrained omits values at their class default: Cohere's rope_theta is 500000
  // (CohereConfig.default_theta), GLM-4's partial_rotary_factor 0.5 (Glm4Config).
  nlohmann::json j = {{"model_type", "cohere"}, {"hidden_size", 8192}, {"num_attention_heads", 64},
                      {"max_position_embeddings", 131072}};
  EXPECT_EQ(read_hf_config(j).params, rope(128, 128, 500000.0, RopeLayout::interleaved));
  j = {{"model_type", "glm4"}, {"hidden_size", 4096}, {"num_attention_heads", 32}, {"head_dim", 128},
       {"max_position_embeddings", 32768}};
  EXPECT_EQ(read_hf_config(j).params, rope(128, 64, 10000.0, RopeLayout::interleaved));
}

TEST(HfConfig, Llama4ScoutEqualFactorsInterleavedAndLayerKinds) {
  // Llama 4 Scout's RoPE as the issue quotes its config: llama3 with low = high = 1.
  nlohmann::json text = {{"model_type", "llama4_text"},  {"hidden_size", 5120},
                         {"num_attention_heads", 40},     {"head_dim", 128},
                         {"num_hidden_layers", 8},        {"max_position_embeddings", 10485760},
                         {"rope_theta", 500000.0},        {"attn_temperature_tuning", 4},
                         {"floor_scale", 8192},           {"attn_scale", 0.1},
                         {"rope_scaling", {{"rope_type", "llama3"}, {"factor", 16.0}, {"low_freq_factor", 1.0},
                                           {"high_freq_factor", 1.0}, {"original_max_position_embeddings", 8192}}}};
  nlohmann::json j = {{"model_type", "llama4"}, {"text_config", text}};
  auto c = read_hf_config(j);
  auto p = rope(128, 128, 500000.0, RopeLayout::interleaved);
  p.scaling.kind = RopeScalingKind::llama3;
  p.scaling.factor = 16.0;
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 1.0;
  p.scaling.original_max_positions = 8192;
  EXPECT_EQ(c.params, p);
  ASSERT_EQ(c.unread.size(), 1u);
  EXPECT_EQ(c.unread[0],
            "Llama 4 layer kinds (every text_config.no_rope_layer_interval = 4th of 8 layers (no "
            "text_config.no_rope_layers)): 6 of 8 layers apply this RoPE (posenc's vectors are theirs); 2 apply none "
            "(NoPE: layers 3, 7), whose queries attn_temperature_tuning multiplies by log1p(floor((i + 1) / "
            "floor_scale)) * attn_scale + 1 at token index i (floor_scale 8192.0, attn_scale 0.1): a query temperature "
            "posenc's vectors do not express");
  j["text_config"]["no_rope_layers"] = {1, 1, 2};
  EXPECT_EQ(error_of(j), "invalid hf_config.text_config.no_rope_layers = [1,1,2]: must be a list of 0 (no RoPE) and 1 "
                         "(RoPE)");
}

TEST(HfConfig, AttributeMapAliasesAreReadAsTransformersReadsThem) {
  // GPTJConfig.attribute_map: hidden_size is n_embd, num_attention_heads n_head,
  // max_position_embeddings n_positions; a config.json may use either name.
  nlohmann::json j = {{"model_type", "gptj"}, {"hidden_size", 4096}, {"num_attention_heads", 16}, {"rotary_dim", 64},
                      {"max_position_embeddings", 2048}};
  auto c = read_hf_config(j);
  EXPECT_EQ(c.params, rope(256, 64, 10000.0, RopeLayout::interleaved));
  EXPECT_EQ(c.max_position_embeddings, 2048);
  // Every key read (no note about an unread one); the note is the registry's: GPT-J's sin/cos
  // table ends at n_positions, where posenc's vectors go past, so it is not verified.
  ASSERT_EQ(c.unread.size(), 1u);
  EXPECT_TRUE(c.unread[0].starts_with("model_type = \"gptj\": not verified against transformers 5.25.0"));
  j["hidden_size"] = 4097;
  EXPECT_EQ(error_of(j), "invalid hf_config.hidden_size = 4097: must be a multiple of num_attention_heads (16)");
}

TEST(HfConfig, TextConfigOfAMultimodalModel) {
  nlohmann::json j = {{"model_type", "qwen2_5_vl"}, {"text_config", llama()}};
  j["text_config"]["model_type"] = "qwen2_5_vl_text";
  j["text_config"]["rope_theta"] = "bad";
  EXPECT_EQ(error_of(j), "invalid hf_config.text_config.rope_theta = \"bad\": must be a number");
  j["text_config"]["rope_theta"] = 1e6;
  EXPECT_EQ(read_hf_config(j).params.base, 1e6);
}

TEST(HfConfig, PerLayerTypeRopeParametersReadTheFullAttentionLayers) {
  // transformers 5's Gemma 3 layout: one RoPE dict per layer type.
  nlohmann::json j = {{"model_type", "gemma3_text"}, {"head_dim", 256}, {"max_position_embeddings", 131072},
                      {"rope_parameters",
                       {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1e6}}},
                        {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}}}};
  auto c = read_hf_config(j);
  auto p = rope(256, 256, 1e6, RopeLayout::half);
  p.scaling.kind = RopeScalingKind::linear;
  p.scaling.factor = 8.0;
  EXPECT_EQ(c.params, p);
  ASSERT_EQ(c.unread.size(), 1u);
  EXPECT_EQ(c.unread[0], "rope_parameters.sliding_attention = {\"rope_theta\":10000.0,\"rope_type\":\"default\"}: another "
                         "layer type's RoPE; posenc reads the full-attention layers'");
}

TEST(HfConfig, TopLevelOriginalLengthWinsAndTheOtherIsReported) {
  auto j = llama();
  j["original_max_position_embeddings"] = 4096;
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 32.0}, {"original_max_position_embeddings", 8192}};
  auto c = read_hf_config(j);
  EXPECT_EQ(c.params.scaling.original_max_positions, 4096);
  ASSERT_EQ(c.unread.size(), 1u);
  EXPECT_NE(c.unread[0].find("top-level original_max_position_embeddings (4096)"), std::string::npos);
}

TEST(HfRopeDict, RoundTripsEveryPublishedConfig) {
  for (const char* name : {"llama-3.1-8b.json", "llama-3.2-1b.json", "mistral-7b-instruct-v0.2.json",
                           "qwen2.5-7b-instruct-yarn.json", "qwen2-vl-7b-instruct.json", "deepseek-v3.json",
                           "gpt-oss-20b.json", "phi-3.5-mini-instruct.json", "phi-2.json", "gpt-neox-20b.json",
                           "gpt-j-6b.json", "gemma-7b.json"}) {
    auto c = read(name);
    auto back = read_hf_config(nlohmann::json::parse(hf_rope_config(c.params).dump()));
    EXPECT_EQ(back.params, c.params) << name << ": " << hf_rope_config(c.params).dump();
    EXPECT_TRUE(back.unread.empty()) << name;
  }
}

TEST(HfRopeDict, RoundTripsEveryKind) {
  std::vector<RopeParams> all;
  auto p = rope(64, 48, 20000.0, RopeLayout::interleaved);
  all.push_back(p);
  p.scaling.kind = RopeScalingKind::linear;
  p.scaling.factor = 4.0;
  all.push_back(p);
  p.scaling.kind = RopeScalingKind::dynamic;
  p.scaling.original_max_positions = 4096;
  all.push_back(p);
  auto q = rope(256, 64, 1e6, RopeLayout::half);  // Gemma-style proportional, 32 of 128 pairs
  q.partial = PartialRotary::proportional;
  all.push_back(q);
  q.scaling.kind = RopeScalingKind::linear;
  q.scaling.factor = 8.0;
  all.push_back(q);
  for (const auto& r : all) {
    auto back = read_hf_config(nlohmann::json::parse(hf_rope_config(r).dump()));
    EXPECT_EQ(back.params, r) << hf_rope_config(r).dump();
  }
}

TEST(HfConfigErrors, InterleavedMropeIsRefused) {
  auto j = llama();
  j["rope_scaling"] = {{"rope_type", "default"}, {"mrope_section", {24, 20, 20}}, {"mrope_interleaved", true}};
  EXPECT_EQ(error_of(j), "invalid hf_config.rope_scaling.mrope_interleaved = true: must be false or absent: posenc's "
                         "M-RoPE sections are contiguous (Qwen2-VL)");
  j["partial_rotary_factor"] = 1.5;
  j["rope_scaling"].erase("mrope_interleaved");
  EXPECT_EQ(error_of(j), "invalid hf_config.partial_rotary_factor = 1.5: must be in (0, 1]");
}

TEST(HfRopeDict, KeyNames) {
  auto j = hf_rope_config(read("phi-2.json").params);
  EXPECT_EQ(j.dump(), R"({"head_dim":80,"rope_parameters":{"rope_type":"default","rope_theta":10000.0,"partial_rotary_factor":0.4}})");
  RopeParams p = rope(8, 8, 10000.0, RopeLayout::half);
  p.inverse = true;
  EXPECT_THROW(hf_rope_config(p), InvalidParameter);
}

}  // namespace
}  // namespace posenc::models
