// `standard` covers honest framework code (SPEC.md section 5, "Scalings' intermediates"): RoPE
// written the way Hugging Face transformers' modeling_rope_utils.py and its rotary embeddings
// form it (scalars in Python's binary64, tensors in T), with T = double (the code run in
// float64) and T = float (float32), passes `standard` on every shipped none, linear, NTK,
// dynamic, YaRN and Llama 3 config and on sweeps of untruncated YaRN, Llama 3 and dynamic NTK
// configs. Without the condition terms the float64 code fails the gpt-oss YaRN group (margin
// 1.42), the YaRN sweep (2.96; float32 1.73) and the Llama 3 sweep (1.72).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numbers>

#include "posenc/judge/runner.hpp"
#include "posenc/reports/text.hpp"
#include "posenc/vectors/case_types.hpp"
#include "posenc/vectors/expected.hpp"

namespace posenc::conformance {
namespace {

const std::filesystem::path kVectors = POSENC_VECTORS_DIR;

// HF find_correction_dim and find_correction_range (Python floats, math.log).
double correction_dim(double rotations, double dim, double base, double original) {
  return dim * std::log(original / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
}

// inv_freq and attention_scaling as HF's _compute_*_parameters form them.
template <class T>
std::vector<T> hf_inv_freq(const RopeParams& p, double& attention) {
  const RopeScaling& s = p.scaling;
  const std::int64_t dim = p.rotary_dim;
  double base = p.base;
  attention = 1;
  if (s.kind == RopeScalingKind::ntk) base *= std::pow(*s.factor, static_cast<double>(dim) / static_cast<double>(dim - 2));
  if (s.kind == RopeScalingKind::dynamic) {
    // _compute_dynamic_ntk_parameters: seq_len = max(seq_len, max_position_embeddings).
    const double length = static_cast<double>(std::max(*s.seq_len, *s.original_max_positions));
    const double f = *s.factor;
    base *= std::pow(f * length / static_cast<double>(*s.original_max_positions) - (f - 1),
                     static_cast<double>(dim) / static_cast<double>(dim - 2));
  }
  // base ** (torch.arange(0, dim, 2).float() / dim), then 1.0 / that.
  std::vector<T> pos_freqs, inv;
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    pos_freqs.push_back(std::pow(static_cast<T>(base), static_cast<T>(2 * i) / static_cast<T>(dim)));
    inv.push_back(T(1) / pos_freqs.back());
  }
  if (s.kind == RopeScalingKind::linear) {
    for (auto& w : inv) w /= static_cast<T>(*s.factor);
  } else if (s.kind == RopeScalingKind::yarn) {
    const double factor = *s.factor, original = static_cast<double>(*s.original_max_positions);
    double low = correction_dim(s.yarn_beta_fast(), static_cast<double>(dim), p.base, original);
    double high = correction_dim(s.yarn_beta_slow(), static_cast<double>(dim), p.base, original);
    if (s.yarn_truncate()) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(dim - 1));
    if (low == high) high += 0.001;  // linear_ramp_factor
    for (std::size_t i = 0; i < inv.size(); ++i) {
      const T extrapolation = T(1) / pos_freqs[i];
      const T interpolation = T(1) / (static_cast<T>(factor) * pos_freqs[i]);
      T ramp = (static_cast<T>(i) - static_cast<T>(low)) / static_cast<T>(high - low);
      ramp = std::clamp(ramp, T(0), T(1));
      const T extrapolation_factor = T(1) - ramp;
      inv[i] = interpolation * (T(1) - extrapolation_factor) + extrapolation * extrapolation_factor;
    }
    auto mscale = [&](double m) { return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0; };
    attention = s.attention_factor ? *s.attention_factor
                : s.mscale && s.mscale_all_dim ? mscale(*s.mscale) / mscale(*s.mscale_all_dim)
                                               : mscale(1);
  } else if (s.kind == RopeScalingKind::llama3) {
    const double original = static_cast<double>(*s.original_max_positions);
    const double low_ff = *s.low_freq_factor, high_ff = *s.high_freq_factor, factor = *s.factor;
    const T low_wavelen = static_cast<T>(original / low_ff), high_wavelen = static_cast<T>(original / high_ff);
    for (auto& w : inv) {
      const T wavelen = static_cast<T>(2 * std::numbers::pi) / w;
      const T scaled = wavelen > low_wavelen ? w / static_cast<T>(factor) : w;
      const T smooth = (static_cast<T>(original) / wavelen - static_cast<T>(low_ff)) / static_cast<T>(high_ff - low_ff);
      const T smoothed = (T(1) - smooth) * scaled / static_cast<T>(factor) + smooth * scaled;
      w = !(wavelen < high_wavelen) && !(wavelen > low_wavelen) ? smoothed : scaled;
    }
  }
  return inv;
}

bool hf_supports(const RopeParams& p) {
  using K = RopeScalingKind;
  const K k = p.scaling.kind;
  return p.partial == PartialRotary::standard && p.mrope_section.empty() &&
         (k == K::none || k == K::linear || k == K::ntk || k == K::dynamic || k == K::yarn || k == K::llama3);
}

// cos and sin rows times attention_scaling, and q * cos + rotate_half(q) * sin, all in T.
template <class T>
struct HfRope {
  const RopeParams& p;
  double attention = 1;
  std::vector<T> inv;
  explicit HfRope(const RopeParams& params) : p(params), inv(hf_inv_freq<T>(params, attention)) {}
  T angle(std::int64_t position, std::size_t i) const {
    const T t = static_cast<T>(position) * inv[i];
    return p.inverse ? -t : t;
  }
  std::vector<T> rotate(std::int64_t position, std::span<const double> x) const {
    std::vector<T> y(x.begin(), x.end());
    for (std::size_t i = 0; i < inv.size(); ++i) {
      const T c = std::cos(angle(position, i)) * static_cast<T>(attention);
      const T s = std::sin(angle(position, i)) * static_cast<T>(attention);
      const auto a = static_cast<std::size_t>(p.pair_first(static_cast<std::int64_t>(i)));
      const auto b = static_cast<std::size_t>(p.pair_second(static_cast<std::int64_t>(i)));
      const T xa = static_cast<T>(x[a]), xb = static_cast<T>(x[b]);
      y[a] = xa * c - xb * s;
      y[b] = xb * c + xa * s;
    }
    return y;
  }
};

template <class T>
std::optional<std::vector<double>> hf_values(const VectorGroup& g, const VectorCase& c) {
  using Values = std::optional<std::vector<double>>;
  return std::visit(
      overloaded{
          [](const cases::RopeFrequencies& r) -> Values {
            if (!hf_supports(r.p)) return std::nullopt;
            const HfRope<T> rope(r.p);
            std::vector<double> v(rope.inv.begin(), rope.inv.end());
            v.push_back(static_cast<double>(static_cast<T>(rope.attention)));
            return v;
          },
          [](const cases::RopeTable& r) -> Values {
            if (!hf_supports(r.p)) return std::nullopt;
            const HfRope<T> rope(r.p);
            std::vector<double> cs, sn;
            for (std::size_t i = 0; i < rope.inv.size(); ++i) {
              cs.push_back(std::cos(rope.angle(r.position[0], i)) * static_cast<T>(rope.attention));
              sn.push_back(std::sin(rope.angle(r.position[0], i)) * static_cast<T>(rope.attention));
            }
            cs.insert(cs.end(), sn.begin(), sn.end());
            return cs;
          },
          [](const cases::RopeRotate& r) -> Values {
            if (!hf_supports(r.p)) return std::nullopt;
            const auto y = HfRope<T>(r.p).rotate(r.position[0], r.x);
            return std::vector<double>(y.begin(), y.end());
          },
          [](const cases::RopeDot& r) -> Values {
            // The suite's own logit from the rotations, in extended precision (SPEC.md section 8).
            if (!hf_supports(r.p)) return std::nullopt;
            const HfRope<T> rope(r.p);
            const auto q = rope.rotate(r.q_position[0], r.q), k = rope.rotate(r.k_position[0], r.k);
            long double dot = 0;
            for (std::size_t j = 0; j < q.size(); ++j) dot += static_cast<long double>(q[j]) * k[j];
            return std::vector<double>{static_cast<double>(static_cast<T>(dot))};
          },
          [](const auto&) -> Values { return std::nullopt; },
      },
      typed_case(g, c));
}

// The HF-style code in T, answering only the format of T (f64 for double, f32 for float).
template <class T>
class HfStyle final : public Implementation {
 public:
  std::string name() const override { return std::is_same_v<T, float> ? "HF-style float32" : "HF-style float64"; }
  std::vector<Outcome> run(const VectorGroup& g, const VectorCase& c, std::span<const Format> formats) override {
    std::vector<Outcome> out;
    for (Format f : formats) {
      const auto v = f == own && c.valid ? hf_values<T>(g, c) : std::nullopt;
      out.push_back(v ? Outcome{Status::ok, *v, "", g.type == CaseType::rope_dot} : Outcome{});
    }
    return out;
  }
  std::optional<Format> working_format(Format) const override { return own; }
  static constexpr Format own = std::is_same_v<T, float> ? Format::f32 : Format::f64;
};

template <class T>
void expect_passes_shipped() {
  HfStyle<T> hf;
  RunOptions o;
  o.vectors = kVectors;
  o.tolerance.profile = Profile::standard;
  o.filter = {"rope/none", "rope/linear", "rope/ntk", "rope/dynamic", "rope/yarn", "rope/llama3"};
  o.formats = {HfStyle<T>::own};
  const RunReport r = run_vectors(hf, o);
  std::ostringstream summary;
  print_summary(summary, r, 20);
  EXPECT_TRUE(r.conformant()) << summary.str();
  for (const auto& f : r.files) {
    EXPECT_GT(f.passed(), 0) << hf.name() << " judged nothing in " << f.path;
    std::cout << "  " << hf.name() << ", " << f.path << ": " << f.passed() << " passed, worst margin "
              << f.worst_margin.value << " (tcId " << f.worst_margin.tc_id << ")\n";
  }
}

TEST(HfStyle, Float64PassesStandardOnEveryShippedConfig) { expect_passes_shipped<double>(); }
TEST(HfStyle, Float32PassesStandardOnEveryShippedConfig) { expect_passes_shipped<float>(); }

// 120 untruncated YaRN configs (head_dim, base, factor, original length and beta_fast on a grid),
// each judged on its frequencies and one table row at the extended context's last position.
std::vector<RopeParams> yarn_sweep() {
  std::vector<RopeParams> out;
  for (std::int64_t dim : {64, 128}) {
    for (double base : {10000.0, 150000.0, 500000.0, 1000000.0}) {
      for (double factor : {4.0, 8.0, 16.0, 32.0, 40.0}) {
        for (std::int64_t original : {2048, 4096, 8192}) {
          RopeParams p;
          p.head_dim = p.rotary_dim = dim;
          p.base = base;
          p.layout = RopeLayout::half;
          p.scaling.kind = RopeScalingKind::yarn;
          p.scaling.factor = factor;
          p.scaling.original_max_positions = original;
          p.scaling.beta_fast = dim == 64 ? 32.0 : 16.0;
          p.scaling.beta_slow = 1.0;
          p.scaling.truncate = false;
          out.push_back(p);
        }
      }
    }
  }
  return out;
}

// Llama 3 and dynamic NTK configs on a grid: the smoothing band and the dynamic base.
std::vector<RopeParams> llama3_and_dynamic_sweep() {
  std::vector<RopeParams> out;
  for (std::int64_t dim : {64, 128}) {
    for (double base : {10000.0, 500000.0}) {
      for (double factor : {2.0, 8.0, 32.0}) {
        RopeParams p;
        p.head_dim = p.rotary_dim = dim;
        p.base = base;
        p.layout = RopeLayout::half;
        for (std::int64_t original : {2048, 8192}) {
          for (auto [low, high] : {std::pair{1.0, 4.0}, std::pair{1.0, 8.0}, std::pair{2.0, 4.0}}) {
            p.scaling = {};
            p.scaling.kind = RopeScalingKind::llama3;
            p.scaling.factor = factor;
            p.scaling.original_max_positions = original;
            p.scaling.low_freq_factor = low;
            p.scaling.high_freq_factor = high;
            out.push_back(p);
          }
          for (std::int64_t length : {original + 1, 3 * original, 40 * original}) {
            p.scaling = {};
            p.scaling.kind = RopeScalingKind::dynamic;
            p.scaling.factor = factor;
            p.scaling.original_max_positions = original;
            p.scaling.seq_len = length;
            out.push_back(p);
          }
        }
      }
    }
  }
  return out;
}

template <class T>
double worst_sweep_margin(const std::vector<RopeParams>& sweep) {
  Tolerance t;
  t.profile = Profile::standard;
  double worst = 0;
  for (const RopeParams& p : sweep) {
    for (CaseType type : {CaseType::rope_frequencies, CaseType::rope_table}) {
      VectorGroup g;
      g.type = type;
      g.params = p;
      VectorCase c;
      if (type == CaseType::rope_table) c.position = {*p.scaling.original_max_positions * 40 - 1};
      c.expected = Expected::from(evaluate_reference(g, c));
      const auto y = hf_values<T>(g, c);
      const auto specs = element_specs(g, c);
      for (std::size_t j = 0; j < specs.size(); ++j) {
        const Format f = HfStyle<T>::own;
        const ElementError e = check_element(specs[j], c.expected.of(f)[j], y->at(j), f, t);
        EXPECT_TRUE(e.pass) << to_string(type) << " element " << j << " of " << to_string(p.scaling.kind) << " head_dim " << p.head_dim << " base "
                            << p.base << " factor " << *p.scaling.factor << " original "
                            << *p.scaling.original_max_positions << " seq_len " << p.scaling.seq_len.value_or(0)
                            << " low_freq_factor " << p.scaling.low_freq_factor.value_or(0) << ": margin " << e.margin << " (scaled " << e.scaled
                            << ", bound " << e.bound << ")";
        worst = std::max(worst, e.margin);
      }
    }
  }
  return worst;
}

TEST(HfStyle, UntruncatedYarnSweepPassesStandard) {
  const auto sweep = yarn_sweep();
  ASSERT_GE(sweep.size(), 100u);
  const double f64 = worst_sweep_margin<double>(sweep), f32 = worst_sweep_margin<float>(sweep);
  std::cout << "  " << sweep.size() << " untruncated YaRN configs: worst margin " << f64 << " (float64), " << f32
            << " (float32)\n";
}

TEST(HfStyle, Llama3AndDynamicSweepPassesStandard) {
  const auto sweep = llama3_and_dynamic_sweep();
  const double f64 = worst_sweep_margin<double>(sweep), f32 = worst_sweep_margin<float>(sweep);
  std::cout << "  " << sweep.size() << " Llama 3 and dynamic NTK configs: worst margin " << f64 << " (float64), " << f32
            << " (float32)\n";
}

}  // namespace
}  // namespace posenc::conformance
