// RoPE without scaling: head dims, bases, layouts, partial rotary (both conventions), M-RoPE,
// inverse rotation, edge inputs, the seed 003 example, and invalid parameters.
#include <cmath>
#include <limits>

#include "catalog.hpp"
#include "published_configs.hpp"
#include "rope_suite.hpp"
#include "posenc/reference/reference.hpp"
#include "posenc/generator/seed_examples.hpp"

namespace posenc::generator {
namespace {

RopeParams rope(std::int64_t head_dim, std::int64_t rotary_dim, double base, RopeLayout layout) {
  RopeParams p;
  p.head_dim = head_dim;
  p.rotary_dim = rotary_dim;
  p.base = base;
  p.layout = layout;
  return p;
}

std::string name(const RopeParams& p) {
  return "head_dim " + std::to_string(p.head_dim) + ", rotary_dim " + std::to_string(p.rotary_dim) + ", base " +
         decimal(p.base) +
         ", " + std::string(to_string(p.layout)) + (p.inverse ? ", inverse" : "");
}

void seed003(FileBuilder& b) {
  const auto p = rope(8, 8, 10000.0, RopeLayout::interleaved);
  b.group(CaseType::rope_dot, p,
          "seed 003: numpy RoPE, q and k = default_rng(0).normal(size=8) twice (full-precision inputs: judged in f64 "
          "only)");
  for (auto [m, n, printed] : seeds::kRopeDots) {
    VectorCase c = at(m, "seed 003: q at " + std::to_string(m) + ", k at " + std::to_string(n) +
                             " (the document prints " + printed + ")",
                      {"SeedExample", "F64Only"});
    c.position_b = {n};
    c.x.assign(seeds::kQ.begin(), seeds::kQ.end());
    c.y.assign(seeds::kK.begin(), seeds::kK.end());
    b.add(std::move(c));
  }
  b.group(CaseType::rope_rotate, p, "seed 003: q rotated (full-precision inputs: judged in f64 only)");
  for (std::int64_t pos : {3, 100, 5000}) {
    VectorCase c = at(pos, "seed 003: q at position " + std::to_string(pos), {"SeedExample", "F64Only"});
    c.x.assign(seeds::kQ.begin(), seeds::kQ.end());
    b.add(std::move(c));
  }
}

void edge_inputs(FileBuilder& b) {
  const auto p = rope(8, 8, 10000.0, RopeLayout::interleaved);
  b.group(CaseType::rope_rotate, p,
          "edge inputs: zeros, signed zeros and f16 subnormals are judged in every format; the other cases in the "
          "formats their comment names (flags F64Only, FormatSubset)");
  auto add = [&](std::int64_t pos, std::vector<double> x, std::string comment, std::vector<std::string> flags) {
    VectorCase c = at(pos, std::move(comment), std::move(flags));
    c.x = std::move(x);
    b.add(std::move(c));
  };
  add(12345, std::vector<double>(8, 0.0), "all zeros", {"EdgeInput"});
  add(12345, {-0.0, 0.0, -0.0, -0.0, 0.0, -0.0, 1.0, -0.0}, "signed zeros", {"EdgeInput"});
  add(0, {-0.0, 0.0, -0.0, -0.0, 0.0, -0.0, 1.0, -0.0}, "signed zeros at position 0", {"EdgeInput", "ZeroPosition"});
  add(777, {0x1p-1074, -0x1p-1074, 0x1.8p-1070, 0x1p-1022, -0x1.fffffffffffffp-1023, 0x1p-149, 0x1p-133, 0x1p-24},
      "subnormal inputs (binary64, and the smallest binary32, bf16 and f16 subnormals): judged in f64 only",
      {"EdgeInput", "F64Only"});
  add(777, {0x1p-149, -0x1p-149, 0x1.8p-148, 0x1p-133, -0x1p-127, 0x1.fcp-127, 0x1p-24, 1.0},
      "binary32 subnormals (and bf16's and f16's smallest): judged in f64 and f32", {"EdgeInput", "FormatSubset"});
  add(777, {0x1p-133, -0x1p-133, 0x1.8p-132, 0x1p-127, -0x1.fcp-127, 0x1p-126, 0x1p-24, 1.0},
      "bf16 subnormals (also binary32 subnormals): judged in f64, f32 and bf16", {"EdgeInput", "FormatSubset"});
  add(777, {0x1p-24, -0x1p-24, 0x1.8p-23, 0x1p-15, -0x1.fp-15, 0x1p-14, 0x1.8p-20, 1.0},
      "f16 subnormals (normal in bf16 and f32): judged in every format", {"EdgeInput"});
  add(777, {0x1.fffffffffffffp+1023, -0x1.fffffffffffffp+1023, 1e300, -1e300, 0x1p+128, 65520.0, 0x1.fep+127, 1.0},
      "huge inputs: outputs overflow narrower formats; judged in f64 only", {"EdgeInput", "F64Only"});
  add(777, {0x1.fep+127, -0x1.fep+127, 0x1p+127, 0x1.8p+126, 65280.0, -65280.0, 0x1.fep+15, 1.0},
      "bf16's and binary32's largest binades (0x1.fep+127 is bf16's largest value): rotated outputs may overflow "
      "bf16 to inf; judged in f64, f32 and bf16",
      {"EdgeInput", "FormatSubset"});
  add(777, {65280.0, -65280.0, 0x1.fep+15, 0x1p+15, -0x1.8p+15, 49152.0, 0x1p-14, 1.0},
      "near f16's largest value (65280 = 0x1.fep+15 is exact in all four): rotated outputs overflow f16 to inf; "
      "judged in every format",
      {"EdgeInput"});
  // x = (sin t, cos t) rounded to binary64: y_a = sin t cos t - cos t sin t is zero but for the
  // rounding of the inputs, so an implementation's own error shows at full relative size.
  std::int64_t pos = 1000003;
  std::int64_t position[] = {pos};
  auto row = reference::rope_table_row(p, position);
  std::vector<double> x;
  for (std::size_t i = 0; i < 4; ++i) {
    x.push_back(row[4 + i].f64());  // sin t_i
    x.push_back(row[i].f64());      // cos t_i
  }
  add(pos, x, "x = (sin t_i, cos t_i) in binary64: y_2i = sin t cos t - cos t sin t cancels to ~1e-17; judged in f64 only",
      {"Cancellation", "LongContext", "F64Only"});
}

void negative_and_inverse(FileBuilder& b) {
  for (auto layout : {RopeLayout::interleaved, RopeLayout::half}) {
    auto p = rope(64, 64, 10000.0, layout);
    p.inverse = true;
    RopeSuite s;
    s.table = false;
    s.flags = {"Inverse"};
    add_rope_suite(b, p, name(p), s);
  }
  for (auto layout : {RopeLayout::half, RopeLayout::interleaved}) {
    auto p = rope(16, 16, 10000.0, layout);
    p.inverse = layout == RopeLayout::interleaved;
    b.group(CaseType::rope_rotate, p, name(p) + ": negative positions, x on the common grid", kCommonGrid);
    for (std::int64_t pos : std::vector<std::int64_t>{-1, -2, -7, -2047, -2048, -2049, -16777216, -16777217, -1000000,
                                                      -2147483647, -2147483648, -4611686018427387904}) {
      auto flags = position_flags(pos);
      if (p.inverse) flags.push_back("Inverse");
      VectorCase c = at(pos, "position " + std::to_string(pos), flags);
      c.x = grid_vector(b.rng(), 16);
      b.add(std::move(c));
    }
  }
}

VectorFile none_file() {
  FileBuilder b("rope", "none", 1001);
  describe_flags(b);
  for (std::int64_t d : {2, 8, 64, 80, 96, 128, 256}) {
    for (auto layout : {RopeLayout::interleaved, RopeLayout::half}) {
      const auto p = rope(d, d, 10000.0, layout);
      RopeSuite s;
      s.full_sweep = d == 128;
      s.table = layout == RopeLayout::half;  // the table does not depend on the layout
      s.dots = layout == RopeLayout::half;
      if (d == 128 && layout == RopeLayout::half) s.full_precision_formats = {Format::f64, Format::f32};
      add_rope_suite(b, p, name(p), s);
    }
  }
  RopeSuite model;
  model.full_sweep = true;
  model.flags = {"ModelConfig"};
  add_rope_suite(b, rope(128, 128, 500000.0, RopeLayout::half), "Meta-Llama-3-8B: rope_theta 500000, head_dim 128", model);
  add_rope_suite(b, rope(128, 128, 1e6, RopeLayout::half), "CodeLlama-7b: rope_theta 1000000, head_dim 128", model);
  negative_and_inverse(b);
  seed003(b);
  edge_inputs(b);
  return std::move(b).finish();
}

VectorFile partial_file() {
  FileBuilder b("rope", "partial", 1002);
  describe_flags(b);
  RopeSuite s;
  s.flags = {"ModelConfig", "PartialRotary"};
  RopeSuite full = s;
  full.full_sweep = true;  // one config per file over every position of the sweep
  add_rope_suite(b, rope(96, 24, 10000.0, RopeLayout::half),
                 "GPT-NeoX-20B: head_dim 96, rotary_pct 0.25 (rotary_dim 24), half layout", full);
  add_rope_suite(b, rope(256, 64, 10000.0, RopeLayout::interleaved),
                 "GPT-J-6B: head_dim 256, rotary_dim 64, interleaved", s);
  add_rope_suite(b, rope(80, 32, 10000.0, RopeLayout::half),
                 "Phi-2: head_dim 80, partial_rotary_factor 0.4 (rotary_dim 32), half layout", s);
  return std::move(b).finish();
}

VectorFile proportional_file() {
  FileBuilder b("rope", "proportional", 1003);
  describe_flags(b);
  RopeSuite s;
  s.flags = {"PartialRotary"};
  auto p = rope(256, 64, 10000.0, RopeLayout::half);
  p.partial = PartialRotary::proportional;
  add_rope_suite(b, p,
                 "Gemma-style p-RoPE (HF rope_type proportional): head_dim 256, partial_rotary_factor 0.25, "
                 "exponent over head_dim, zero frequency past pair 32",
                 suite(s.flags, true));
  p.base = 1e6;
  p.scaling.kind = RopeScalingKind::linear;
  p.scaling.factor = 8.0;
  add_rope_suite(b, p, "proportional with rope_theta 1000000 and linear factor 8 (HF applies inv_freq /= factor)", s);
  return std::move(b).finish();
}

VectorFile mrope_file() {
  FileBuilder b("rope", "mrope", 1004);
  describe_flags(b);
  const auto p = published::qwen2_vl();
  RopeSuite s = suite({"ModelConfig"}, true);
  const std::string what = "Qwen2-VL-7B: head_dim 128, rope_theta 1000000, mrope_section [16, 24, 24] (t, h, w)";
  add_rope_suite(b, p, what + ", text tokens (equal axes)", s);
  b.group(CaseType::rope_rotate, p, what + ": vision tokens (distinct axes), x on the common grid", kCommonGrid);
  for (auto axes : std::vector<std::vector<std::int64_t>>{{5, 0, 0}, {5, 3, 7}, {100, 31, 2}, {4096, 64, 64},
                                                           {1000000, 1000, 999}, {2147483647, 0, 2147483647}}) {
    VectorCase c = at_axes(axes, "t, h, w = " + std::to_string(axes[0]) + ", " + std::to_string(axes[1]) + ", " +
                                     std::to_string(axes[2]),
                           {"ModelConfig"});
    c.x = grid_vector(b.rng(), 128);
    b.add(std::move(c));
  }
  // M-RoPE with interleaved pairs and partial rotary: a kernel that assumes the half layout for
  // M-RoPE (vllm-project/vllm-ascend issue 12765) or drops partial_rotary_factor on the M-RoPE
  // path passes every group above. Last in the file, so that the tcIds before it stay.
  b.note("InterleavedLayout",
         "M-RoPE with the interleaved layout (pairs 2i, 2i + 1, GPT-J style): a kernel that assumes the half "
         "layout for M-RoPE fails it");
  auto glm = rope(128, 64, 10000.0, RopeLayout::interleaved);
  glm.mrope_section = {8, 12, 12};
  const std::string glm_what =
      "GLM-4.1V text model (glm4v_text: head_dim 4096 / 32 heads = 128, partial_rotary_factor 0.5, rope_theta 10000, "
      "mrope_section [8, 12, 12]) with GLM-4V's interleaved pairs";
  RopeSuite g = suite({"ModelConfig", "PartialRotary", "InterleavedLayout"});
  g.dots = false;
  add_rope_suite(b, glm, glm_what + ", text tokens (equal axes)", g);
  b.group(CaseType::rope_rotate, glm, glm_what + ": vision tokens (distinct axes), x on the common grid", kCommonGrid);
  for (auto axes : std::vector<std::vector<std::int64_t>>{{5, 3, 7}, {100, 31, 2}, {4096, 64, 64}, {1000000, 1000, 999}}) {
    VectorCase c = at_axes(axes, "t, h, w = " + std::to_string(axes[0]) + ", " + std::to_string(axes[1]) + ", " +
                                     std::to_string(axes[2]),
                           {"ModelConfig", "PartialRotary", "InterleavedLayout"});
    c.x = grid_vector(b.rng(), 128);
    b.add(std::move(c));
  }
  return std::move(b).finish();
}

VectorFile invalid_rope_file() {
  FileBuilder b("rope", "invalid", 1005);
  describe_flags(b);
  auto refuse = [&](RopeParams p, const std::string& comment, const std::string& parameter) {
    b.group(CaseType::rope_rotate, p, comment);
    VectorCase c = at_axes(std::vector<std::int64_t>(std::max<std::size_t>(p.mrope_section.size(), 1), 1), comment,
                           {"InvalidParameter"});
    c.x = std::vector<double>(static_cast<std::size_t>(std::max<std::int64_t>(p.head_dim, 0)), 0.5);
    b.add_invalid(std::move(c), parameter);
  };
  auto base = [] { return rope(8, 8, 10000.0, RopeLayout::half); };
  auto p = base();
  p.head_dim = 7;
  p.rotary_dim = 6;
  refuse(p, "odd head_dim", "rope.head_dim");
  p = base();
  p.head_dim = 0;
  p.rotary_dim = 0;
  refuse(p, "head_dim 0", "rope.head_dim");
  p = base();
  p.rotary_dim = 10;
  refuse(p, "rotary_dim > head_dim", "rope.rotary_dim");
  p.rotary_dim = 5;
  refuse(p, "odd rotary_dim", "rope.rotary_dim");
  for (double bad : {0.0, -10000.0, 1.0, 0.5}) {
    p = base();
    p.base = bad;
    refuse(p, "base " + decimal(bad) + " (must be > 1)", "rope.base");
  }
  for (auto kind : {RopeScalingKind::linear, RopeScalingKind::ntk}) {
    for (double bad : {0.0, -2.0}) {
      p = base();
      p.scaling.kind = kind;
      p.scaling.factor = bad;
      refuse(p, std::string(to_string(kind)) + " factor " + decimal(bad), "rope.scaling.factor");
    }
  }
  p = base();
  p.scaling.kind = RopeScalingKind::linear;
  refuse(p, "linear scaling without a factor", "rope.scaling.factor");
  p = base();
  p.scaling.factor = 4.0;
  refuse(p, "a factor with scaling none (would be silently ignored)", "rope.scaling.factor");
  p = rope(2, 2, 10000.0, RopeLayout::half);
  p.scaling.kind = RopeScalingKind::ntk;
  p.scaling.factor = 4.0;
  refuse(p, "ntk with rotary_dim 2 (exponent d/(d-2) undefined)", "rope.rotary_dim");
  p = base();
  p.scaling.kind = RopeScalingKind::dynamic;
  p.scaling.factor = 2.0;
  p.scaling.original_max_positions = 4096;
  refuse(p,
         "dynamic without seq_len (HF derives it per forward as max(position_ids) + 1 and caches the largest; "
         "posenc takes it as a parameter, SPEC.md section 2.4)",
         "rope.scaling.seq_len");
  p = base();
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 16.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.beta_fast = 1.0;
  p.scaling.beta_slow = 32.0;
  refuse(p, "yarn beta_fast < beta_slow", "rope.scaling.beta_fast");
  p.scaling.beta_fast.reset();
  p.scaling.beta_slow.reset();
  p.scaling.mscale = 0.0;
  refuse(p, "yarn mscale 0 (HF would treat it as absent)", "rope.scaling.mscale");
  p.scaling.mscale.reset();
  p.scaling.original_max_positions = 0;
  refuse(p, "yarn original_max_positions 0", "rope.scaling.original_max_positions");
  p = base();
  p.scaling.kind = RopeScalingKind::llama3;
  p.scaling.factor = 8.0;
  p.scaling.original_max_positions = 8192;
  p.scaling.low_freq_factor = 4.0;
  p.scaling.high_freq_factor = 2.0;
  // Equal factors are valid (an empty medium band, SPEC.md section 2.4); below is not.
  refuse(p, "llama3 high_freq_factor < low_freq_factor (thresholds in the wrong order)", "rope.scaling.high_freq_factor");
  p = base();
  p.scaling.kind = RopeScalingKind::longrope;
  p.scaling.factor = 32.0;
  p.scaling.original_max_positions = 4096;
  p.scaling.seq_len = 100;
  p.scaling.short_factor = {1.0, 1.0, 1.0, 1.0};
  p.scaling.long_factor = {1.0, 1.0, 1.0};
  refuse(p, "longrope long_factor of 3 values for 4 pairs (never truncated or padded)", "rope.scaling.long_factor");
  p.scaling.long_factor.push_back(1.0);
  p.scaling.original_max_positions = 1;
  refuse(p, "longrope original_max_positions 1 (ln 1 divides the attention factor)",
         "rope.scaling.original_max_positions");
  p = base();
  p.partial = PartialRotary::proportional;
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 4.0;
  p.scaling.original_max_positions = 4096;
  refuse(p, "proportional partial rotary with yarn", "rope.scaling.kind");
  p = base();
  p.mrope_section = {1, 2};
  refuse(p, "mrope_section summing to 3, not rotary_dim/2 = 4", "rope.mrope_section");
  p.mrope_section = {4, 0};
  refuse(p, "mrope_section with an empty section", "rope.mrope_section[1]");
  p = base();
  b.group(CaseType::rope_rotate, p, "a position per axis is required");
  VectorCase c = at_axes({1, 2}, "two position coordinates for single-axis RoPE", {"InvalidParameter"});
  c.x = std::vector<double>(8, 0.5);
  b.add_invalid(std::move(c), "rope.positions");
  c = at(1, "x of 7 values for head_dim 8 (never truncated or padded)", {"InvalidParameter"});
  c.x = std::vector<double>(7, 0.5);
  b.add_invalid(std::move(c), "rope.x");
  return std::move(b).finish();
}

// SPEC.md section 2.3: a NaN input makes both elements of its pair NaN, leaves every other pair as
// it would be without it, and is copied where it is not rotated.
VectorFile nan_file() {
  FileBuilder b("rope", "nan", 1006);
  describe_flags(b);
  b.note("NanInput", "a NaN input: both elements of its pair are NaN, the other pairs are unaffected");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto add = [&](const RopeParams& p, std::int64_t pos, std::vector<std::size_t> nan_at, const std::string& comment) {
    VectorCase c = at(pos, comment, position_flags(pos));
    c.flags.push_back("NanInput");
    c.x = grid_vector(b.rng(), p.head_dim);
    for (auto i : nan_at) c.x[i] = nan;
    b.add(std::move(c));
  };
  auto p = rope(8, 8, 10000.0, RopeLayout::interleaved);
  b.group(CaseType::rope_rotate, p, name(p) + ": NaN inputs", kCommonGrid);
  add(p, 5, {0}, "x[0] NaN: pair (0, 1) NaN");
  add(p, 0, {3}, "x[3] NaN at position 0: pair (2, 3) NaN, the rest unrotated");
  add(p, 2147483647, {1, 6}, "x[1] and x[6] NaN: pairs (0, 1) and (6, 7) NaN");
  p = rope(8, 8, 10000.0, RopeLayout::half);
  b.group(CaseType::rope_rotate, p, name(p) + ": NaN inputs", kCommonGrid);
  add(p, 100, {1}, "x[1] NaN: half-layout pair (1, 5) NaN");
  add(p, 16777217, {4, 7}, "x[4] and x[7] NaN: pairs (0, 4) and (3, 7) NaN");
  p = rope(8, 4, 10000.0, RopeLayout::interleaved);
  b.group(CaseType::rope_rotate, p, name(p) + ": NaN inputs, partial rotary", kCommonGrid);
  add(p, 7, {6}, "x[6] NaN in the unrotated tail: copied, nothing else changes");
  add(p, 7, {2}, "x[2] NaN: pair (2, 3) NaN, the tail copied");
  return std::move(b).finish();
}

}  // namespace

std::vector<VectorFile> rope_vectors() {
  std::vector<VectorFile> files;
  files.push_back(none_file());
  files.push_back(partial_file());
  files.push_back(proportional_file());
  files.push_back(mrope_file());
  files.push_back(invalid_rope_file());
  files.push_back(nan_file());
  return files;
}

}  // namespace posenc::generator
