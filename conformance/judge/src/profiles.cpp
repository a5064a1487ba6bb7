#include "posenc/judge/profiles.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "posenc/formulas/sinusoidal_frequency.hpp"
#include "posenc/reference/reference.hpp"

namespace posenc::conformance {
namespace {

constexpr std::array kProfiles{"exact", "strict", "standard"};

long double exact_value(const std::string& decimal) { return std::strtold(decimal.c_str(), nullptr); }

// Frequencies of a sinusoidal encoding from the shared formula in long double, rounded to
// binary64: enough for a tolerance, which needs no certification.
double sinusoidal_frequency(const SinusoidalParams& p, std::int64_t i) {
  return static_cast<double>(formulas::sinusoidal_frequency<long double>(p, i));
}

struct RopeKnowledge {
  std::vector<double> inv_freq;
  double attention = 1;
};

RopeKnowledge rope_knowledge(const RopeParams& p) {
  auto f = reference::rope_frequencies(p);
  RopeKnowledge k;
  for (std::size_t i = 0; i + 1 < f.size(); ++i) k.inv_freq.push_back(f[i].f64());
  k.attention = f.back().f64();
  return k;
}

double max_angle(const RopeParams& p, const RopeKnowledge& k, const std::vector<std::int64_t>& pos) {
  double worst = 0;
  for (std::size_t i = 0; i < k.inv_freq.size(); ++i) {
    const auto axis = static_cast<std::size_t>(p.pair_axis(static_cast<std::int64_t>(i)));
    worst = std::max(worst, std::fabs(static_cast<double>(pos[axis]) * k.inv_freq[i]));
  }
  return worst;
}

double norm(const std::vector<double>& v) {
  long double s = 0;
  for (double x : v) s += static_cast<long double>(x) * x;
  return static_cast<double>(std::sqrt(s));
}

// Strict bound per group type (SPEC §5); copied elements are handled separately.
double strict_bound(const VectorGroup& g) {
  switch (g.type) {
    case CaseType::rope_table:
    case CaseType::rope_frequencies:
    case CaseType::sinusoidal_row:
    case CaseType::sinusoidal_embed:
      return 4;
    case CaseType::rope_rotate:
      return 6;
    case CaseType::rope_dot:
      return static_cast<double>(std::get<RopeParams>(g.params).head_dim) + 18;
    case CaseType::sinusoidal_dot:
      return static_cast<double>(std::get<SinusoidalParams>(g.params).d_model) + 12;
    case CaseType::alibi_slopes:
      return 2;
    case CaseType::alibi_bias:
      return 3;
    case CaseType::learned_lookup:
      return 0;
  }
  return 0;
}

}  // namespace

std::string_view to_string(Profile p) { return kProfiles[static_cast<std::size_t>(p)]; }

Profile parse_profile(std::string_view s) {
  for (std::size_t i = 0; i < kProfiles.size(); ++i) {
    if (s == kProfiles[i]) return static_cast<Profile>(i);
  }
  throw InvalidParameter("--profile", "'" + std::string(s) + "'", "one of exact, strict, standard");
}

long double ulp_of(Format f, long double v) {
  const FormatSpec s = spec(f);
  const long double smallest = std::ldexp(1.0L, s.min_quantum());
  if (v == 0 || !std::isfinite(v)) return smallest;
  int exponent = 0;
  (void)std::frexp(std::fabs(v), &exponent);  // |v| in [2^(exponent-1), 2^exponent)
  return std::max(std::ldexp(1.0L, exponent - s.precision), smallest);
}

std::vector<ElementSpec> element_specs(const VectorGroup& g, const VectorCase& c) {
  std::vector<ElementSpec> out(c.expected.size());
  for (std::size_t j = 0; j < out.size(); ++j) {
    out[j].exact = exact_value(c.expected.exact[j]);
    out[j].scale = 1;
    out[j].angle = out[j].log_freq = 0;
    out[j].copied = false;
  }
  switch (g.type) {
    case CaseType::sinusoidal_row:
    case CaseType::sinusoidal_embed: {
      const auto& p = std::get<SinusoidalParams>(g.params);
      const auto half = static_cast<std::size_t>(p.d_model / 2);
      for (std::size_t j = 0; j < out.size(); ++j) {
        const std::size_t pair = p.layout == SinusoidalLayout::interleaved ? j / 2 : j % half;
        const double w = sinusoidal_frequency(p, static_cast<std::int64_t>(pair));
        out[j].angle = std::fabs(static_cast<double>(c.position[0]) * w);
        out[j].log_freq = std::fabs(std::log(w));
        if (g.type == CaseType::sinusoidal_embed) {
          out[j].scale = std::fabs(c.x[j]) * std::sqrt(static_cast<double>(p.d_model)) + 1;
        }
      }
      break;
    }
    case CaseType::sinusoidal_dot: {
      const auto& p = std::get<SinusoidalParams>(g.params);
      out[0].scale = static_cast<double>(p.d_model) / 2;
      out[0].angle = std::fabs(static_cast<double>(c.position[0])) + std::fabs(static_cast<double>(c.position_b[0]));
      out[0].log_freq = std::fabs(std::log(sinusoidal_frequency(p, p.d_model / 2 - 1)));
      break;
    }
    case CaseType::rope_frequencies:
      for (auto& e : out) {
        e.scale = std::fabs(static_cast<double>(e.exact));
        // standard adds 2 |ln theta| (SPEC §5), expressed through angle (standard adds 6 angle).
        e.angle = e.exact > 0 ? std::fabs(std::log(static_cast<double>(e.exact))) / 3 : 0;
      }
      break;
    case CaseType::rope_table:
    case CaseType::rope_rotate:
    case CaseType::rope_dot: {
      const auto& p = std::get<RopeParams>(g.params);
      const RopeKnowledge k = rope_knowledge(p);
      const std::size_t pairs = k.inv_freq.size();
      auto angle = [&](std::size_t i) {
        const auto axis = static_cast<std::size_t>(p.pair_axis(static_cast<std::int64_t>(i)));
        return std::fabs(static_cast<double>(c.position[axis]) * k.inv_freq[i]);
      };
      auto log_freq = [&](std::size_t i) { return k.inv_freq[i] > 0 ? std::fabs(std::log(k.inv_freq[i])) : 0.0; };
      double max_log_freq = 0;
      for (std::size_t i = 0; i < pairs; ++i) max_log_freq = std::max(max_log_freq, log_freq(i));
      if (g.type == CaseType::rope_table) {
        for (std::size_t j = 0; j < out.size(); ++j) {
          out[j].scale = std::fabs(k.attention);
          out[j].angle = angle(j % pairs);
          out[j].log_freq = log_freq(j % pairs);
        }
      } else if (g.type == CaseType::rope_rotate) {
        for (std::size_t j = 0; j < out.size(); ++j) {
          out[j].copied = true;
          out[j].scale = std::fabs(c.x[j]);
        }
        for (std::size_t i = 0; i < pairs; ++i) {
          const auto a = static_cast<std::size_t>(p.pair_first(static_cast<std::int64_t>(i)));
          const auto b = static_cast<std::size_t>(p.pair_second(static_cast<std::int64_t>(i)));
          // (A pair with a NaN expects NaN, judged without a scale.)
          const double pair_norm = std::isnan(c.x[a]) || std::isnan(c.x[b]) ? 1.0
                                                                            : std::hypot(c.x[a], c.x[b]) * std::fabs(k.attention);
          for (auto e : {a, b}) {
            out[e].copied = false;
            out[e].scale = pair_norm;
            out[e].angle = angle(i);
            out[e].log_freq = log_freq(i);
          }
        }
      } else {
        out[0].scale = k.attention * k.attention * norm(c.x) * norm(c.y);
        out[0].angle = (max_angle(p, k, c.position) + max_angle(p, k, c.position_b)) *
                       std::sqrt(static_cast<double>(p.head_dim));
        out[0].log_freq = max_log_freq;
      }
      break;
    }
    case CaseType::alibi_slopes:
      for (auto& e : out) e.scale = std::fabs(static_cast<double>(e.exact));
      break;
    case CaseType::alibi_bias: {
      const auto& p = std::get<AlibiParams>(g.params);
      const double slope = reference::alibi_slopes(p)[static_cast<std::size_t>(c.head)].f64();
      const double distance = std::fabs(static_cast<double>(c.query) - static_cast<double>(c.key));
      out[0].scale = slope * std::max(distance, 1.0);
      break;
    }
    case CaseType::learned_lookup:
      for (auto& e : out) {
        e.copied = true;
        e.scale = std::fabs(static_cast<double>(e.exact));
      }
      break;
  }
  return out;
}

long double scale_unit(Format f, double scale) {
  // u s, floored at the smallest subnormal: below it the format cannot resolve anything.
  return std::max(static_cast<long double>(unit_roundoff(f)) * scale, std::ldexp(1.0L, spec(f).min_quantum()));
}

double scaled_bound(const VectorGroup& g, const ElementSpec& e, const Tolerance& t) {
  if (t.scaled_bound) return *t.scaled_bound;
  if (t.profile == Profile::exact || e.copied || g.type == CaseType::learned_lookup) return 0;
  // standard: an angle formed in the working format, its frequency from exp/pow in that format.
  return strict_bound(g) + (t.profile == Profile::standard ? (6 + 2 * e.log_freq) * e.angle : 0);
}

ElementError check_element(const VectorGroup& g, const ElementSpec& e, std::uint64_t expected_bits, double y, Format f,
                           const Tolerance& t) {
  ElementError r;
  const double expected = to_double(f, expected_bits);
  // A NaN is right exactly where a NaN is expected (propagated from a NaN input; any NaN).
  if (std::isnan(y) || std::isnan(expected)) {
    r.pass = std::isnan(y) && std::isnan(expected);
    r.scaled = r.ulp = r.pass ? 0 : std::numeric_limits<double>::infinity();
    return r;
  }
  if (std::isinf(expected) || std::isinf(y)) {
    r.pass = y == expected;
    r.scaled = r.ulp = r.pass ? 0 : std::numeric_limits<double>::infinity();
    return r;
  }
  const long double diff = std::fabs(static_cast<long double>(y) - e.exact);
  r.ulp = static_cast<double>(diff / ulp_of(f, e.exact));
  r.scaled = static_cast<double>(diff / scale_unit(f, e.scale));
  const bool same_bits = exact_bits(f, y) == expected_bits;
  const bool zero_either_sign = e.exact == 0 && y == 0 && !e.copied;
  r.bound = scaled_bound(g, e, t);
  // A bound of 0 (exact profile, copied elements) asks for the very bits; a correctly rounded
  // value passes every bound.
  const bool exact_only = r.bound == 0 && !t.scaled_bound;
  r.pass = same_bits || (exact_only ? zero_either_sign : r.scaled <= r.bound);
  return r;
}

}  // namespace posenc::conformance
