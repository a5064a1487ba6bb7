// The scalings' formulas transcribed a second time, in plain binary64, straight from Hugging Face
// transformers' modeling_rope_utils.py with published model configs. Both reference backends share
// one formula implementation; this independent transcription catches a formula copied wrong.
// Agreement is to 1e-12 relative: binary64 evaluation error, far below any real transcription error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "posenc/reference/reference.hpp"

namespace posenc {
namespace {

struct Expected {
  std::vector<double> inv_freq;
  double attention = 1.0;
};

std::vector<double> default_inv(double base, int dim) {
  std::vector<double> out;
  for (int i = 0; i < dim; i += 2) out.push_back(1.0 / std::pow(base, static_cast<double>(i) / dim));
  return out;
}

void expect_matches(const RopeParams& p, const Expected& e) {
  auto got = reference::rope_frequencies(p);
  ASSERT_EQ(got.size(), e.inv_freq.size() + 1);
  for (std::size_t i = 0; i < e.inv_freq.size(); ++i) {
    EXPECT_NEAR(got[i].f64(), e.inv_freq[i], 1e-12 * std::fabs(e.inv_freq[i])) << "pair " << i;
  }
  EXPECT_NEAR(got.back().f64(), e.attention, 1e-12) << "attention factor";
}

RopeParams rope(int head_dim, double base, RopeScalingKind kind) {
  RopeParams p;
  p.head_dim = p.rotary_dim = head_dim;
  p.base = base;
  p.scaling.kind = kind;
  return p;
}

TEST(DoubleFormulas, Llama31_8B) {
  // meta-llama/Llama-3.1-8B config: rope_theta 500000, head_dim 128, rope_scaling
  // {factor 8, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 8192}.
  auto p = rope(128, 500000.0, RopeScalingKind::llama3);
  p.scaling.factor = 8.0;
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 4.0;
  p.scaling.original_max_positions = 8192;
  Expected e;
  const double old_len = 8192, low_wl = old_len / 1.0, high_wl = old_len / 4.0;
  for (double w : default_inv(500000.0, 128)) {
    double wavelen = 2 * std::numbers::pi / w;
    double v = wavelen > low_wl ? w / 8.0 : w;
    if (!(wavelen < high_wl) && !(wavelen > low_wl)) {
      double smooth = (old_len / wavelen - 1.0) / (4.0 - 1.0);
      v = (1 - smooth) * v / 8.0 + smooth * v;
    }
    e.inv_freq.push_back(v);
  }
  expect_matches(p, e);
}

Expected yarn_double(int dim, double base, double factor, int original, double beta_fast, double beta_slow,
                     bool truncate, double mscale, double mscale_all_dim) {
  auto correction_dim = [&](double rotations) {
    return dim * std::log(original / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
  };
  double low = correction_dim(beta_fast), high = correction_dim(beta_slow);
  if (truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dim - 1.0);
  if (low == high) high += 0.001;
  Expected e;
  auto extrapolation = default_inv(base, dim);
  for (int i = 0; i < dim / 2; ++i) {
    double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
    double extrapolation_factor = 1 - ramp;
    double w = extrapolation[i];
    e.inv_freq.push_back(w / factor * (1 - extrapolation_factor) + w * extrapolation_factor);
  }
  auto get_mscale = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
  e.attention = (mscale > 0 && mscale_all_dim > 0) ? get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
                                                   : get_mscale(factor, 1.0);
  return e;
}

TEST(DoubleFormulas, YarnDeepSeekV2) {
  // deepseek-ai/DeepSeek-V2 config: qk_rope_head_dim 64, rope_theta 10000, rope_scaling
  // {type yarn, factor 40, original_max_position_embeddings 4096, beta_fast 32, beta_slow 1,
  //  mscale 0.707, mscale_all_dim 0.707}.
  auto p = rope(64, 10000.0, RopeScalingKind::yarn);
  p.scaling.factor = 40.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.beta_fast = 32.0;
  p.scaling.beta_slow = 1.0;
  p.scaling.mscale = 0.707;
  p.scaling.mscale_all_dim = 0.707;
  expect_matches(p, yarn_double(64, 10000.0, 40.0, 4096, 32, 1, true, 0.707, 0.707));
}

TEST(DoubleFormulas, YarnGptOssUntruncated) {
  // openai/gpt-oss config: head_dim 64, rope_theta 150000, rope_scaling {type yarn, factor 32,
  // beta_fast 32, beta_slow 1, truncate false, original_max_position_embeddings 4096}.
  auto p = rope(64, 150000.0, RopeScalingKind::yarn);
  p.scaling.factor = 32.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.truncate = false;
  expect_matches(p, yarn_double(64, 150000.0, 32.0, 4096, 32, 1, false, 0, 0));
}

TEST(DoubleFormulas, YarnEqualBetasUntruncated) {
  // Kimi-K2-style betas (beta_fast = beta_slow = 1): the zero-width ramp guard (+0.001).
  auto p = rope(64, 50000.0, RopeScalingKind::yarn);
  p.scaling.factor = 32.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.beta_fast = 1.0;
  p.scaling.beta_slow = 1.0;
  p.scaling.truncate = false;
  expect_matches(p, yarn_double(64, 50000.0, 32.0, 4096, 1, 1, false, 0, 0));
}

TEST(DoubleFormulas, DynamicNtkAboveOriginalLength) {
  auto p = rope(128, 10000.0, RopeScalingKind::dynamic);
  p.scaling.factor = 2.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.seq_len = 10000;
  const double base = 10000.0 * std::pow(2.0 * 10000 / 4096 - (2.0 - 1), 128.0 / 126.0);
  expect_matches(p, {default_inv(base, 128), 1.0});
}

TEST(DoubleFormulas, NtkAlpha) {
  auto p = rope(128, 10000.0, RopeScalingKind::ntk);
  p.scaling.factor = 8.0;
  expect_matches(p, {default_inv(10000.0 * std::pow(8.0, 128.0 / 126.0), 128), 1.0});
}

TEST(DoubleFormulas, LinearCodeLlamaBase) {
  // CodeLlama: rope_theta 1e6 (no scaling); here with a linear factor 4 on top.
  auto p = rope(128, 1e6, RopeScalingKind::linear);
  p.scaling.factor = 4.0;
  auto inv = default_inv(1e6, 128);
  for (auto& w : inv) w /= 4.0;
  expect_matches(p, {inv, 1.0});
}

TEST(DoubleFormulas, LongRopeShortAndLong) {
  // Phi-3-mini-128k shape: head_dim 96, original 4096, max_position_embeddings 131072
  // (factor 32); the factor arrays here are synthetic, rising from 1 to 1 + 47/8.
  auto p = rope(96, 10000.0, RopeScalingKind::longrope);
  p.scaling.factor = 32.0;
  p.scaling.original_max_positions = 4096;
  for (int i = 0; i < 48; ++i) {
    p.scaling.short_factor.push_back(1.0 + i / 64.0);
    p.scaling.long_factor.push_back(1.0 + i / 8.0);
  }
  for (std::int64_t seq_len : {4096, 4097}) {
    p.scaling.seq_len = seq_len;
    const auto& ext = seq_len > 4096 ? p.scaling.long_factor : p.scaling.short_factor;
    Expected e;
    for (int i = 0; i < 48; ++i) e.inv_freq.push_back(1.0 / (ext[i] * std::pow(10000.0, 2.0 * i / 96)));
    e.attention = std::sqrt(1 + std::log(32.0) / std::log(4096.0));
    expect_matches(p, e);
  }
}

TEST(DoubleFormulas, ProportionalGemmaStyle) {
  // HF _compute_proportional_rope_parameters: head_dim 256, partial_rotary_factor 0.25.
  RopeParams p;
  p.head_dim = 256;
  p.rotary_dim = 64;
  p.partial = PartialRotary::proportional;
  Expected e;
  for (int i = 0; i < 128; ++i) e.inv_freq.push_back(i < 32 ? 1.0 / std::pow(10000.0, 2.0 * i / 256) : 0.0);
  expect_matches(p, e);
}

TEST(DoubleFormulas, SinusoidalConventions) {
  SinusoidalParams paper{.d_model = 8};
  SinusoidalParams t2t{.d_model = 8, .layout = SinusoidalLayout::concatenated,
                       .frequencies = SinusoidalFrequencies::tensor2tensor};
  auto a = reference::sinusoidal_row(paper, 1000);
  auto b = reference::sinusoidal_row(t2t, 1000);
  for (int i = 0; i < 4; ++i) {
    double w_paper = std::pow(10000.0, -2.0 * i / 8), w_t2t = std::exp(-i * std::log(10000.0) / 3);
    EXPECT_NEAR(a[2 * i].f64(), std::sin(1000 * w_paper), 1e-12);
    EXPECT_NEAR(a[2 * i + 1].f64(), std::cos(1000 * w_paper), 1e-12);
    EXPECT_NEAR(b[i].f64(), std::sin(1000 * w_t2t), 1e-12);
    EXPECT_NEAR(b[4 + i].f64(), std::cos(1000 * w_t2t), 1e-12);
  }
  // d = 2 under tensor2tensor: max(d/2 - 1, 1) = 1 keeps the single frequency at 1.
  auto d2 = reference::sinusoidal_row(SinusoidalParams{.d_model = 2, .frequencies = SinusoidalFrequencies::tensor2tensor}, 3);
  EXPECT_NEAR(d2[0].f64(), std::sin(3.0), 1e-15);
}

}  // namespace
}  // namespace posenc
