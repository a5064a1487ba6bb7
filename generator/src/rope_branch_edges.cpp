// The bases are chosen (offline, with mpmath at 60 digits, then rounded to the nearest double) so
// that one decision lands a stated distance from its threshold: 2 ulp of binary32 (binary32
// arithmetic may decide either way) or 64 ulp of binary64 (binary64 arithmetic with a few ulp of
// error decides right), on each side. The reference decides every one exactly (certified
// intervals, SPEC.md section 1); the comments give the signed distance in ulp of that format.
#include "rope_branch_edges.hpp"

#include <string>
#include <vector>

#include "catalog.hpp"

namespace posenc::generator {
namespace {

struct Edge {
  double base;
  const char* where;  // which decision, and the signed distance from its threshold
};

// One frequencies case and one rotation (x on the common grid) at position 10^6 per base.
void add_edge(FileBuilder& b, RopeParams p, const Edge& e, const std::string& what) {
  p.base = e.base;
  const std::string name = what + ", base " + decimal(e.base) + ": " + e.where;
  b.group(CaseType::rope_frequencies, p, name);
  b.add(at_axes({}, "inv_freq per pair and attention factor", {"BranchEdge"}));
  b.group(CaseType::rope_rotate, p, name + "; x on the common grid", kCommonGrid);
  VectorCase c = at(1000000, "position 1000000, random x", {"BranchEdge", "LongContext"});
  c.x = grid_vector(b.rng(), p.head_dim);
  b.add(std::move(c));
}

// head_dim = rotary_dim = 128, half layout, the given scaling (base set by each case).
RopeParams head128(RopeScalingKind kind, double factor, std::int64_t original) {
  RopeParams p;
  p.head_dim = p.rotary_dim = 128;
  p.layout = RopeLayout::half;
  p.scaling.kind = kind;
  p.scaling.factor = factor;
  p.scaling.original_max_positions = original;
  return p;
}

}  // namespace

void describe_branch_edge(FileBuilder& b) {
  b.note("BranchEdge",
         "a scaling's branch decision lies within a few ulp of its threshold (the comment gives the distance); the "
         "reference decides it exactly, and an implementation comparing in binary32 (HF forms Llama 3's wavelen in "
         "float32, ggml YaRN's correction dims in float) may take the other branch");
}

void llama3_branch_edges(FileBuilder& b) {
  RopeParams p = head128(RopeScalingKind::llama3, 8.0, 8192);
  p.scaling.low_freq_factor = 1.0;
  p.scaling.high_freq_factor = 4.0;
  // lambda_i = 2 pi base^(2i/128) against L0/low = 8192 (pair 35) and L0/high = 2048 (pair 28).
  // Llama 3's blend is continuous at both thresholds, so the other branch differs by rounding only.
  const Edge edges[] = {
      {0x1.e561e28b5e338p+18, "lambda_35 = 8192 - 2 ulp(binary32): the blended branch"},
      {0x1.e561fe47d256dp+18, "lambda_35 = 8192 + 2 ulp(binary32): divided by factor"},
      {0x1.e561f06998205p+18, "lambda_35 = 8192 - 64.0 ulp(binary64): the blended branch"},
      {0x1.e561f069983c1p+18, "lambda_35 = 8192 + 64.1 ulp(binary64): divided by factor"},
      {0x1.0f06f5d42ae19p+19, "lambda_28 = 2048 - 2 ulp(binary32): unscaled"},
      {0x1.0f070930188f7p+19, "lambda_28 = 2048 + 2 ulp(binary32): the blended branch"},
      {0x1.0f06ff822195fp+19, "lambda_28 = 2048 - 63.9 ulp(binary64): unscaled"},
      {0x1.0f06ff8221a95p+19, "lambda_28 = 2048 + 64.2 ulp(binary64): the blended branch"},
  };
  for (const Edge& e : edges) {
    add_edge(b, p, e, "Llama 3 thresholds: head_dim 128, llama3 factor 8, low_freq_factor 1, high_freq_factor 4, "
                      "original 8192");
  }
}

void yarn_branch_edges(FileBuilder& b) {
  const RopeParams p = head128(RopeScalingKind::yarn, 16.0, 4096);
  // c(r) = 128 ln(4096 / (2 pi r)) / (2 ln base): low = floor(c(32)) is 20 or 21, high =
  // ceil(c(1)) is 45 or 46, and the ramp moves with it.
  const Edge edges[] = {
      {0x1.30fbae6570ed2p+13, "c(beta_fast) = 21 - 2 ulp(binary32): low = 20"},
      {0x1.30fb6bb138557p+13, "c(beta_fast) = 21 + 2 ulp(binary32): low = 21"},
      {0x1.30fb8d0b528a2p+13, "c(beta_fast) = 21 - 64.0 ulp(binary64): low = 20"},
      {0x1.30fb8d0b52477p+13, "c(beta_fast) = 21 + 64.0 ulp(binary64): low = 21"},
      {0x1.3a397db6d16ccp+13, "c(beta_slow) = 45 - 2 ulp(binary32): high = 45"},
      {0x1.3a393d5cb5586p+13, "c(beta_slow) = 45 + 2 ulp(binary32): high = 46"},
      {0x1.3a395d89c1818p+13, "c(beta_slow) = 45 - 64.0 ulp(binary64): high = 45"},
      {0x1.3a395d89c1412p+13, "c(beta_slow) = 45 + 64.0 ulp(binary64): high = 46"},
  };
  for (const Edge& e : edges) {
    add_edge(b, p, e, "YaRN floor/ceil: head_dim 128, yarn factor 16, original 4096, betas 32/1, truncate");
  }
}

void yarn_degenerate_range(FileBuilder& b) {
  b.note("DegenerateRange",
         "YaRN's correction range is empty after clamping (high < low): posenc follows HF and divides by the negative "
         "width, ggml clamps the width to 0.001 (SPEC.md section 2.4)");
  RopeParams p = head128(RopeScalingKind::yarn, 16.0, 4096);
  p.base = 10000.0;
  // c(1024) = 128 ln(4096 / (2048 pi)) / (2 ln 10000) = -3.14 and c(2048) = -7.95: low = max(.., 0)
  // = 0, high = ceil(-3.14) = -3 (truncated) or -3.14. HF: ramp_i = clamp(i / high, 0, 1) = 0 for
  // every pair, so every pair keeps its unscaled frequency; ggml: ramp_i = clamp(i / 0.001, 0, 1),
  // 0 for pair 0 and 1 (interpolated, theta_i / 16) for every other pair.
  p.scaling.beta_fast = 2048.0;
  p.scaling.beta_slow = 1024.0;
  for (bool truncate : {true, false}) {
    p.scaling.truncate = truncate;
    const std::string what = std::string("YaRN degenerate range: head_dim 128, base 10000, factor 16, original 4096, "
                                         "beta_fast 2048, beta_slow 1024, ") +
                             (truncate ? "truncate (low 0, high -3)" : "untruncated (low 0, high -3.14)") +
                             ": every pair unscaled (HF; ggml would interpolate pairs 1..63)";
    b.group(CaseType::rope_frequencies, p, what);
    b.add(at_axes({}, "inv_freq per pair and attention factor", {"DegenerateRange"}));
    b.group(CaseType::rope_rotate, p, what + "; x on the common grid", kCommonGrid);
    VectorCase c = at(4095, "position 4095, random x", {"DegenerateRange"});
    c.x = grid_vector(b.rng(), p.head_dim);
    b.add(std::move(c));
  }
}

}  // namespace posenc::generator
