// RoPE context-extension scalings, each with the parameters of published model configs.
#include "catalog.hpp"
#include "rope_branch_edges.hpp"
#include "rope_suite.hpp"

namespace posenc::generator {
namespace {

RopeParams rope(std::int64_t head_dim, double base, RopeLayout layout, RopeScalingKind kind) {
  RopeParams p;
  p.head_dim = p.rotary_dim = head_dim;
  p.base = base;
  p.layout = layout;
  p.scaling.kind = kind;
  return p;
}

RopeSuite model_suite(bool full_sweep = false) { return suite({"ModelConfig"}, full_sweep); }

VectorFile linear_file() {
  FileBuilder b("rope", "linear", 2001);
  describe_flags(b);
  for (double factor : {4.0, 8.0, 16.0}) {
    auto p = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::linear);
    p.scaling.factor = factor;
    add_rope_suite(b, p,
                   "position interpolation (Chen et al. 2023: LLaMA 7B, head_dim 128, 2048 -> " +
                       std::to_string(static_cast<int>(2048 * factor)) + " with factor " + decimal(factor) + ")",
                   model_suite(factor == 4.0));
  }
  auto p = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::linear);
  p.scaling.factor = 1.0;
  add_rope_suite(b, p, "linear factor 1 (equal to no scaling)", RopeSuite{});
  return std::move(b).finish();
}

VectorFile ntk_file() {
  FileBuilder b("rope", "ntk", 2002);
  describe_flags(b);
  for (double alpha : {2.0, 8.0}) {
    auto p = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::ntk);
    p.scaling.factor = alpha;
    add_rope_suite(b, p, "NTK-aware scaled RoPE (bloc97 2023) on LLaMA 7B shape, alpha " + decimal(alpha),
                   suite({}, alpha == 8.0));
  }
  return std::move(b).finish();
}

VectorFile dynamic_file() {
  FileBuilder b("rope", "dynamic", 2003);
  describe_flags(b);
  b.note("BelowOriginalLength", "seq_len <= original_max_positions: equal to no scaling");
  b.note("AboveOriginalLength", "seq_len > original_max_positions: the base grows");
  // Every position is below seq_len: HF's forward sets seq_len = max(position_ids) + 1 (SPEC.md
  // section 2.4), so a case with a position at or past seq_len is a state no forward reaches.
  for (std::int64_t seq_len : std::vector<std::int64_t>{2048, 4096, 4097, 8192, 16384, 131072, 2147483648}) {
    auto p = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::dynamic);
    p.scaling.factor = 2.0;
    p.scaling.original_max_positions = 4096;
    p.scaling.seq_len = seq_len;
    RopeSuite s = model_suite(seq_len == 16384 || seq_len == 2147483648);
    s.below = seq_len;
    s.flags.push_back(seq_len <= 4096 ? "BelowOriginalLength" : "AboveOriginalLength");
    add_rope_suite(b, p,
                   "HF dynamic NTK, factor 2 on Llama-2-7b (max_position_embeddings 4096, head_dim 128), seq_len " +
                       std::to_string(seq_len) + " (a forward whose largest position is " +
                       std::to_string(seq_len - 1) + "; every position below seq_len)",
                   s);
  }
  return std::move(b).finish();
}

VectorFile yarn_file() {
  FileBuilder b("rope", "yarn", 2004);
  describe_flags(b);
  b.note("Truncated", "yarn truncate = true: the correction range is floored/ceiled to integers");
  b.note("Untruncated", "yarn truncate = false: the correction range is used as is");
  b.note("AttentionFactor", "the attention factor is not 1: cos and sin are scaled by it");
  b.note("FactorBelowOne",
         "yarn factor s < 1 (a context shorter than the trained one): the attention factor is 1, as yarn_get_mscale "
         "returns 1 for scale <= 1 (HF get_mscale, DeepSeek-V2, vLLM); transformers 4.49 takes 0.1 ln(s) + 1 < 1 "
         "there (SPEC 2.4.2)");

  auto deepseek = rope(64, 10000.0, RopeLayout::interleaved, RopeScalingKind::yarn);
  deepseek.scaling.factor = 40.0;
  deepseek.scaling.original_max_positions = 4096;
  deepseek.scaling.beta_fast = 32.0;
  deepseek.scaling.beta_slow = 1.0;
  deepseek.scaling.mscale = 0.707;
  deepseek.scaling.mscale_all_dim = 0.707;
  RopeSuite s = model_suite(true);
  s.flags.push_back("Truncated");
  add_rope_suite(b, deepseek,
                 "DeepSeek-V2: qk_rope_head_dim 64, rope_theta 10000, yarn factor 40, original 4096, beta 32/1, "
                 "mscale = mscale_all_dim = 0.707 (attention factor 1; DeepSeek applies mscale^2 to the softmax "
                 "scale itself)",
                 s);

  for (double factor : {16.0, 32.0}) {
    auto p = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::yarn);
    p.scaling.factor = factor;
    p.scaling.original_max_positions = 4096;
    RopeSuite y = model_suite(factor == 32.0);
    y.flags.insert(y.flags.end(), {"Truncated", "AttentionFactor"});
    add_rope_suite(b, p,
                   std::string("NousResearch/Yarn-Llama-2-7b-") + (factor == 16.0 ? "64k" : "128k") +
                       ": yarn factor " + decimal(factor) + ", original 4096, head_dim 128, default betas 32/1",
                   y);
  }

  auto gpt_oss = rope(64, 150000.0, RopeLayout::half, RopeScalingKind::yarn);
  gpt_oss.scaling.factor = 32.0;
  gpt_oss.scaling.original_max_positions = 4096;
  gpt_oss.scaling.beta_fast = 32.0;
  gpt_oss.scaling.beta_slow = 1.0;
  gpt_oss.scaling.truncate = false;
  RopeSuite g = model_suite(true);
  g.flags.insert(g.flags.end(), {"Untruncated", "AttentionFactor"});
  add_rope_suite(b, gpt_oss, "gpt-oss: head_dim 64, rope_theta 150000, yarn factor 32, original 4096, truncate false", g);

  auto equal_betas = rope(64, 50000.0, RopeLayout::half, RopeScalingKind::yarn);
  equal_betas.scaling.factor = 32.0;
  equal_betas.scaling.original_max_positions = 4096;
  equal_betas.scaling.beta_fast = 1.0;
  equal_betas.scaling.beta_slow = 1.0;
  equal_betas.scaling.mscale = 1.0;
  equal_betas.scaling.mscale_all_dim = 1.0;
  equal_betas.scaling.truncate = false;
  add_rope_suite(b, equal_betas,
                 "Kimi-K2-style yarn: rope_theta 50000, factor 32, beta_fast = beta_slow = 1 (the 0.001 ramp guard), "
                 "untruncated",
                 suite({"Untruncated"}));

  auto override_factor = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::yarn);
  override_factor.scaling.factor = 8.0;
  override_factor.scaling.original_max_positions = 8192;
  override_factor.scaling.attention_factor = 1.0;
  add_rope_suite(b, override_factor, "yarn factor 8 with an explicit attention_factor 1", RopeSuite{});

  auto mscale_only = override_factor;
  mscale_only.scaling.attention_factor.reset();
  mscale_only.scaling.mscale = 0.707;
  add_rope_suite(b, mscale_only,
                 "yarn with mscale but no mscale_all_dim: HF ignores mscale and uses 0.1 ln(factor) + 1",
                 suite({"AttentionFactor"}));
  describe_branch_edge(b);
  yarn_branch_edges(b);
  yarn_degenerate_range(b);
  // s < 1: the one place where the attention factor's g(s, 1) = 1 branch (SPEC 2.4) is taken.
  // Last in the file, so that the tcIds before it stay.
  auto below_one = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::yarn);
  below_one.scaling.factor = 0.5;
  below_one.scaling.original_max_positions = 4096;
  add_rope_suite(b, below_one, "yarn factor 0.5 (below 1: attention factor 1), original 4096, head_dim 128",
                 suite({"FactorBelowOne"}));
  return std::move(b).finish();
}

VectorFile llama3_file() {
  FileBuilder b("rope", "llama3", 2005);
  describe_flags(b);
  auto p = rope(128, 500000.0, RopeLayout::half, RopeScalingKind::llama3);
  p.scaling.factor = 8.0;
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 4.0;
  p.scaling.original_max_positions = 8192;
  add_rope_suite(b, p,
                 "Llama 3.1 8B: head_dim 128, rope_theta 500000, llama3 factor 8, low_freq_factor 1, "
                 "high_freq_factor 4, original 8192",
                 model_suite(true));
  p.head_dim = p.rotary_dim = 64;
  p.scaling.factor = 32.0;
  add_rope_suite(b, p, "Llama 3.2 1B: head_dim 64, rope_theta 500000, llama3 factor 32, low 1, high 4, original 8192",
                 model_suite());
  describe_branch_edge(b);
  llama3_branch_edges(b);
  // Last in the file, so that the tcIds before it stay. Equal factors leave the medium band
  // empty (SPEC.md section 2.4): each pair is kept or divided; Llama 4 rotates interleaved pairs.
  p = rope(128, 500000.0, RopeLayout::interleaved, RopeScalingKind::llama3);
  p.scaling.factor = 16.0;
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 1.0;
  p.scaling.original_max_positions = 8192;
  add_rope_suite(b, p,
                 "Llama 4 Scout: head_dim 128, rope_theta 500000, interleaved, llama3 factor 16, low_freq_factor 1, "
                 "high_freq_factor 1 (no medium band), original 8192",
                 model_suite());
  p.layout = RopeLayout::half;
  add_rope_suite(b, p, "llama3 factor 16, low_freq_factor = high_freq_factor = 1 (no medium band), half layout",
                 model_suite());
  return std::move(b).finish();
}

VectorFile longrope_file() {
  FileBuilder b("rope", "longrope", 2006);
  describe_flags(b);
  b.note("ShortFactor", "seq_len <= original_max_positions: short_factor is used");
  b.note("LongFactor", "seq_len > original_max_positions: long_factor is used");
  // microsoft/Phi-3-vision-128k-instruct config.json, rope_scaling (type "su", i.e. LongRoPE).
  const std::vector<double> long_factor{
      1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0799999237060547, 1.2299998998641968,
      1.2299998998641968, 1.2999999523162842, 1.4499999284744263, 1.5999999046325684, 1.6499998569488525,
      1.8999998569488525, 2.859999895095825,  3.68999981880188,   5.419999599456787,  5.489999771118164,
      5.489999771118164,  9.09000015258789,   11.579999923706055, 15.65999984741211,  15.769999504089355,
      15.789999961853027, 18.360000610351562, 21.989999771118164, 23.079999923706055, 30.009998321533203,
      32.35000228881836,  32.590003967285156, 35.56000518798828,  39.95000457763672,  53.840003967285156,
      56.20000457763672,  57.95000457763672,  59.29000473022461,  59.77000427246094,  59.920005798339844,
      61.190006256103516, 61.96000671386719,  62.50000762939453,  63.3700065612793,   63.48000717163086,
      63.48000717163086,  63.66000747680664,  63.850006103515625, 64.08000946044922,  64.760009765625,
      64.80001068115234,  64.81001281738281,  64.81001281738281};
  const std::vector<double> short_factor{
      1.05, 1.05, 1.05, 1.1, 1.1, 1.1, 1.2500000000000002, 1.2500000000000002, 1.4000000000000004,
      1.4500000000000004, 1.5500000000000005, 1.8500000000000008, 1.9000000000000008, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
      2.000000000000001, 2.000000000000001, 2.000000000000001, 2.1000000000000005, 2.1000000000000005, 2.2,
      2.3499999999999996, 2.3499999999999996, 2.3499999999999996, 2.3499999999999996, 2.3999999999999995,
      2.3999999999999995, 2.6499999999999986, 2.6999999999999984, 2.8999999999999977, 2.9499999999999975,
      3.049999999999997, 3.049999999999997, 3.049999999999997};
  // As for dynamic: every position below seq_len = max(position_ids) + 1.
  for (std::int64_t seq_len : std::vector<std::int64_t>{4096, 4097, 131072, 2147483648}) {
    auto p = rope(96, 10000.0, RopeLayout::half, RopeScalingKind::longrope);
    p.scaling.factor = 32.0;  // max_position_embeddings 131072 / original 4096
    p.scaling.original_max_positions = 4096;
    p.scaling.seq_len = seq_len;
    p.scaling.short_factor = short_factor;
    p.scaling.long_factor = long_factor;
    RopeSuite s = model_suite(seq_len == 131072);
    s.below = seq_len;
    s.flags.push_back(seq_len > 4096 ? "LongFactor" : "ShortFactor");
    add_rope_suite(b, p,
                   "Phi-3-vision-128k-instruct LongRoPE: head_dim 96, rope_theta 10000, original 4096, "
                   "max_position_embeddings 131072 (factor 32, attention factor sqrt(1 + ln 32 / ln 4096)), seq_len " +
                       std::to_string(seq_len) + " (every position below it)",
                   s);
  }
  return std::move(b).finish();
}

}  // namespace

std::vector<VectorFile> rope_scaling_vectors() {
  std::vector<VectorFile> files;
  files.push_back(linear_file());
  files.push_back(ntk_file());
  files.push_back(dynamic_file());
  files.push_back(yarn_file());
  files.push_back(llama3_file());
  files.push_back(longrope_file());
  return files;
}

}  // namespace posenc::generator
