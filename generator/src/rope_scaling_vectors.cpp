// RoPE context-extension scalings, each with the parameters of published model configs.
#include "catalog.hpp"
#include "published_configs.hpp"
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

  const auto deepseek = published::deepseek_v2();
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

  const auto gpt_oss = published::gpt_oss();
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
  // The groups below close gaps that mutation testing found (docs/mutation.md): each reaches a
  // branch or constant of the YaRN formula that no group above decides. Appended, so that the
  // tcIds before them stay.
  b.note("RampGuard",
         "beta_fast = beta_slow and c(beta) 0.0005 below the integer 20: HF's linear_ramp_factor widens the "
         "zero-width ramp by 0.001 (\"if min == max: max += 0.001\"), so pair 20's ramp is (20 - c)/0.001, about "
         "0.48: the guard's 1/1000 decides the frequency");
  // Factor 65/64: the ramp multiplies c's rounding error by 1/0.001, and the blend's condition
  // |1 - 1/s| (1/65 here, 31/32 at factor 32) damps it again, so that pair 20's frequency stays
  // within strict's 4 units for code that forms c in 64-bit arithmetic (SPEC.md section 5).
  auto guard = rope(64, 31827.0, RopeLayout::half, RopeScalingKind::yarn);
  guard.scaling.factor = 1.015625;
  guard.scaling.original_max_positions = 4096;
  guard.scaling.beta_fast = 1.0;
  guard.scaling.beta_slow = 1.0;
  guard.scaling.truncate = false;
  add_rope_suite(b, guard,
                 "yarn factor 1.015625, original 4096, head_dim 64, beta_fast = beta_slow = 1, untruncated, base "
                 "31827: c(1) = 19.99952, so pair 20 lies inside the 0.001-wide ramp",
                 suite({"Untruncated", "AttentionFactor", "RampGuard"}));
  b.note("ClampedRange",
         "the correction range reaches past both ends of [0, D - 1] (c(beta_fast) < 0, c(beta_slow) > D - 1): HF's "
         "find_correction_range clamps it there (max(low, 0), min(high, D - 1)), and every pair lies on the ramp");
  auto clamped = rope(64, 100.0, RopeLayout::half, RopeScalingKind::yarn);
  clamped.scaling.factor = 16.0;
  clamped.scaling.original_max_positions = 4096;
  clamped.scaling.beta_fast = 1024.0;
  clamped.scaling.beta_slow = 0.05;
  add_rope_suite(b, clamped,
                 "yarn factor 16, original 4096, head_dim 64, base 100, beta_fast 1024, beta_slow 0.05, truncated: "
                 "c(1024) = -3.14 and c(0.05) = 65.84, so low = max(-4, 0) = 0 and high = min(66, 63) = 63",
                 suite({"Truncated", "AttentionFactor", "ClampedRange"}));
  b.note("SmallFactor",
         "factor 2, just above 1: the attention factor is g(2, 1) = 0.1 ln 2 + 1 (its formula's branch for s > 1, "
         "nearest its threshold)");
  auto small = rope(128, 10000.0, RopeLayout::half, RopeScalingKind::yarn);
  small.scaling.factor = 2.0;
  small.scaling.original_max_positions = 4096;
  add_rope_suite(b, small, "yarn factor 2 (attention factor 0.1 ln 2 + 1), original 4096, head_dim 128",
                 suite({"Truncated", "AttentionFactor", "SmallFactor"}));
  return std::move(b).finish();
}

VectorFile llama3_file() {
  FileBuilder b("rope", "llama3", 2005);
  describe_flags(b);
  auto p = published::llama31_8b();
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
  // Appended (the tcIds before it stay): every group above has low_freq_factor 1, where L0 / low
  // and L0 * low agree (docs/mutation.md).
  b.note("LowFreqFactor",
         "low_freq_factor 2, not 1: the low-frequency threshold L0 / low_freq_factor (4096) is not L0 itself, as it "
         "is in every published Llama 3 config");
  auto low = published::llama31_8b();
  low.scaling.low_freq_factor = 2.0;
  low.scaling.high_freq_factor = 8.0;
  add_rope_suite(b, low,
                 "Llama 3.1 8B's RoPE with low_freq_factor 2 and high_freq_factor 8: thresholds 4096 and 1024 "
                 "(head_dim 128, rope_theta 500000, factor 8, original 8192)",
                 suite({"LowFreqFactor"}));
  return std::move(b).finish();
}

VectorFile longrope_file() {
  FileBuilder b("rope", "longrope", 2006);
  describe_flags(b);
  b.note("ShortFactor", "seq_len <= original_max_positions: short_factor is used");
  b.note("LongFactor", "seq_len > original_max_positions: long_factor is used");
  // As for dynamic: every position below seq_len = max(position_ids) + 1.
  for (std::int64_t seq_len : std::vector<std::int64_t>{4096, 4097, 131072, 2147483648}) {
    const auto p = published::phi3_longrope(seq_len);
    RopeSuite s = model_suite(seq_len == 131072);
    s.below = seq_len;
    s.flags.push_back(seq_len > 4096 ? "LongFactor" : "ShortFactor");
    add_rope_suite(b, p,
                   "Phi-3-vision-128k-instruct LongRoPE: head_dim 96, rope_theta 10000, original 4096, "
                   "max_position_embeddings 131072 (factor 32, attention factor sqrt(1 + ln 32 / ln 4096)), seq_len " +
                       std::to_string(seq_len) + " (every position below it)",
                   s);
  }
  // Phi-3-vision's LongRoPE factors in a config of its own: a group flagged `flag` (and short or
  // long factor by seq_len), every position below seq_len.
  const auto variant = [&](const char* flag, const char* note, const RopeParams& p, std::int64_t seq_len,
                           const std::string& description) {
    b.note(flag, note);
    RopeSuite s = suite({flag, seq_len > 4096 ? "LongFactor" : "ShortFactor"});
    s.below = seq_len;
    add_rope_suite(b, p, description + ", seq_len " + std::to_string(seq_len) + " (every position below it)", s);
  };
  // A factor <= 1 (max_position_embeddings below the original length) takes the attention factor
  // 1, not sqrt(1 + ln f / ln L0) < 1 (mlx-lm's SuScaledRoPE computed it there, ml-explore/mlx-lm
  // pull 660). Last in the file, so that the tcIds before it stay.
  auto below_one = published::phi3_longrope(2048);
  below_one.scaling.factor = 0.5;
  variant("FactorBelowOne",
          "LongRoPE factor f <= 1 (max_position_embeddings at or below original_max_positions): the attention "
          "factor is 1 (HF _compute_longrope_parameters); sqrt(1 + ln f / ln L0) is below 1 there",
          below_one, 2048,
          "Phi-3-vision's LongRoPE factors with max_position_embeddings 2048, below original 4096 (factor "
          "0.5: attention factor 1)");
  // Appended (the tcIds before them stay): the attention factor's other two branches, which no
  // group above decides (docs/mutation.md).
  auto given = published::phi3_longrope(131072);
  given.scaling.attention_factor = 1.25;
  variant("GivenAttentionFactor",
          "the config gives attention_factor (1.25): it replaces sqrt(1 + ln f / ln L0) (HF "
          "_compute_longrope_parameters reads rope_scaling.attention_factor first)",
          given, 131072, "Phi-3-vision's LongRoPE with attention_factor 1.25 given");
  auto small = published::phi3_longrope(8192);
  small.scaling.factor = 2.0;
  variant("SmallFactor",
          "factor 2, just above 1: the attention factor is sqrt(1 + ln 2 / ln L0) (its formula's branch for f > 1, "
          "nearest its threshold)",
          small, 8192,
          "Phi-3-vision's LongRoPE factors with max_position_embeddings 8192 (factor 2: attention factor "
          "sqrt(1 + ln 2 / ln 4096))");
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
