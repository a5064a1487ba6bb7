#include "posenc/judge/profiles.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "posenc/formulas/sinusoidal_frequency.hpp"
#include "posenc/recent_values.hpp"
#include "posenc/reference/reference.hpp"
#include "posenc/vectors/case_types.hpp"
#include "attention_elements.hpp"
#include "rope_knowledge.hpp"
#include "scaling_condition.hpp"

namespace posenc::conformance {
namespace {

constexpr std::array kProfiles{"exact", "strict", "standard"};

long double exact_value(const std::string& decimal) { return std::strtold(decimal.c_str(), nullptr); }

// Frequencies of a sinusoidal encoding from the shared formula in long double, rounded to
// binary64: enough for a tolerance, which needs no certification.
double sinusoidal_frequency(const SinusoidalParams& p, std::int64_t i) {
  return static_cast<double>(formulas::sinusoidal_frequency<long double>(p, i));
}

double alibi_slope(const AlibiParams& p, std::int64_t head) {
  thread_local RecentValues<AlibiParams, std::vector<Rounded>, 8> kept;
  return kept.get(p, [](const AlibiParams& q) { return reference::alibi_slopes(q); })[static_cast<std::size_t>(head)].f64();
}

double max_angle(const RopeParams& p, const RopeKnowledge& k, std::span<const std::int64_t> pos) {
  double worst = 0;
  for (std::size_t i = 0; i < k.inv_freq.size(); ++i) {
    const auto axis = static_cast<std::size_t>(p.pair_axis(static_cast<std::int64_t>(i)));
    worst = std::max(worst, std::fabs(static_cast<double>(pos[axis]) * k.inv_freq[i]));
  }
  return worst;
}

double norm(std::span<const double> v) {
  long double s = 0;
  for (double x : v) s += static_cast<long double>(x) * x;
  return static_cast<double>(std::sqrt(s));
}

// The strict bounds (SPEC.md section 5), in units of u s, per case type, and each element's scale,
// angle and frequency, which `standard` and the metrics read.
void sinusoidal_elements(std::vector<ElementSpec>& out, const SinusoidalParams& p, std::int64_t position,
                         std::span<const double> x) {
  const auto half = static_cast<std::size_t>(p.d_model / 2);
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::size_t pair = p.layout == SinusoidalLayout::interleaved ? j / 2 : j % half;
    const double w = sinusoidal_frequency(p, static_cast<std::int64_t>(pair));
    out[j].strict = 4;
    out[j].angle = std::fabs(static_cast<double>(position) * w);
    out[j].angle_error = angle_error(w);
    if (!x.empty()) out[j].scale = std::fabs(x[j]) * std::sqrt(static_cast<double>(p.d_model)) + 1;
  }
}

struct RopeElements {
  const RopeParams& p;
  const RopeKnowledge& k;
  explicit RopeElements(const RopeParams& params) : p(params), k(rope_knowledge(params)) {}
  double angle(std::span<const std::int64_t> position, std::size_t i) const {
    const auto axis = static_cast<std::size_t>(p.pair_axis(static_cast<std::int64_t>(i)));
    return std::fabs(static_cast<double>(position[axis]) * k.inv_freq[i]);
  }
  // 6 + 2|ln w_i| + c_i (0 for a pair of frequency 0, which never rotates).
  double angle_error(std::size_t i) const {
    return k.inv_freq[i] > 0 ? conformance::angle_error(k.inv_freq[i]) + k.condition[i] : 0.0;
  }
};

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
  for (std::size_t j = 0; j < out.size(); ++j) out[j].exact = exact_value(c.expected.exact[j]);
  std::visit(
      overloaded{
          [&](const cases::SinusoidalRow& r) { sinusoidal_elements(out, r.p, r.position, {}); },
          [&](const cases::SinusoidalEmbed& r) { sinusoidal_elements(out, r.p, r.position, r.x); },
          [&](const cases::SinusoidalDot& r) {
            out[0].strict = static_cast<double>(r.p.d_model) + 12;
            out[0].scale = static_cast<double>(r.p.d_model) / 2;
            out[0].angle = std::fabs(static_cast<double>(r.a)) + std::fabs(static_cast<double>(r.b));
            out[0].angle_error = angle_error(sinusoidal_frequency(r.p, r.p.d_model / 2 - 1));
          },
          [&](const cases::RopeFrequencies& r) {
            const auto condition = scaling_condition(r.p);
            for (std::size_t j = 0; j < out.size(); ++j) {
              ElementSpec& e = out[j];
              e.strict = 4;
              e.scale = std::fabs(static_cast<double>(e.exact));
              // standard adds 2 |ln theta| + c (SPEC §5): a frequency's "angle" is 1. The last
              // output is the attention factor, which has no condition term.
              const double term = j < condition.size() ? condition[j] : 0.0;
              e.angle = e.exact > 0 ? 1 : 0;
              e.angle_error = e.exact > 0 ? 2 * std::fabs(std::log(static_cast<double>(e.exact))) + term : 0;
            }
          },
          [&](const cases::RopeTable& r) {
            const RopeElements rope(r.p);
            const std::size_t pairs = rope.k.inv_freq.size();
            for (std::size_t j = 0; j < out.size(); ++j) {
              out[j].strict = 4;
              out[j].scale = std::fabs(rope.k.attention);
              out[j].angle = rope.angle(r.position, j % pairs);
              out[j].angle_error = rope.angle_error(j % pairs);
            }
          },
          [&](const cases::RopeRotate& r) {
            const RopeElements rope(r.p);
            for (std::size_t j = 0; j < out.size(); ++j) {
              out[j].copied = true;
              out[j].scale = std::fabs(r.x[j]);
            }
            for (std::size_t i = 0; i < rope.k.inv_freq.size(); ++i) {
              const auto a = static_cast<std::size_t>(r.p.pair_first(static_cast<std::int64_t>(i)));
              const auto b = static_cast<std::size_t>(r.p.pair_second(static_cast<std::int64_t>(i)));
              // (A pair with a NaN expects NaN, judged without a scale.)
              const double pair_norm = std::isnan(r.x[a]) || std::isnan(r.x[b])
                                           ? 1.0
                                           : std::hypot(r.x[a], r.x[b]) * std::fabs(rope.k.attention);
              for (auto e : {a, b}) {
                out[e].copied = false;
                out[e].strict = 6;
                out[e].scale = pair_norm;
                out[e].angle = rope.angle(r.position, i);
                out[e].angle_error = rope.angle_error(i);
              }
            }
          },
          [&](const cases::RopeDot& r) {
            const RopeElements rope(r.p);
            double max_angle_error = 0;
            for (std::size_t i = 0; i < rope.k.inv_freq.size(); ++i) {
              max_angle_error = std::max(max_angle_error, rope.angle_error(i));
            }
            out[0].strict = static_cast<double>(r.p.head_dim) + 18;
            out[0].scale = rope.k.attention * rope.k.attention * norm(r.q) * norm(r.k);
            out[0].angle = (max_angle(r.p, rope.k, r.q_position) + max_angle(r.p, rope.k, r.k_position)) *
                           std::sqrt(static_cast<double>(r.p.head_dim));
            out[0].angle_error = max_angle_error;
          },
          [&](const cases::AlibiSlopes&) {
            for (auto& e : out) {
              e.strict = 2;
              e.scale = std::fabs(static_cast<double>(e.exact));
            }
          },
          [&](const cases::AlibiBias& r) {
            const double slope = alibi_slope(r.p, r.head);
            const double distance = std::fabs(static_cast<double>(r.query) - static_cast<double>(r.key));
            out[0].strict = 3;
            out[0].scale = slope * std::max(distance, 1.0);
          },
          [&](const cases::LearnedLookup&) {
            for (auto& e : out) {
              e.copied = true;
              e.scale = std::fabs(static_cast<double>(e.exact));
            }
          },
          [&](const cases::Attention& a) { attention_elements(out, a, c); },
      },
      typed_case(g, c));
  return out;
}

long double scale_unit(Format f, double scale) {
  // u s, floored at the smallest subnormal: below it the format cannot resolve anything.
  return std::max(static_cast<long double>(unit_roundoff(f)) * scale, std::ldexp(1.0L, spec(f).min_quantum()));
}

Format default_working_format(Format storage) { return storage == Format::f64 ? Format::f64 : Format::f32; }

Format Tolerance::working_format(Format storage) const {
  const auto it = working.find(storage);
  return it == working.end() ? default_working_format(storage) : it->second;
}

Format Tolerance::attention_working_format(Format storage) const {
  const auto it = attention_working.find(storage);
  return it == attention_working.end() ? working_format(storage) : it->second;
}

std::optional<Format> Tolerance::score_format(Format storage) const {
  const auto it = score.find(storage);
  return it == score.end() ? std::nullopt : it->second;
}

std::optional<Format> Tolerance::probability_format(Format storage) const {
  const auto it = probability.find(storage);
  return it == probability.end() ? std::nullopt : it->second;
}

double scaled_bound(const ElementSpec& e, const Tolerance& t, Format storage) {
  if (t.scaled_bound) return *t.scaled_bound;
  if (t.profile == Profile::exact || e.copied) return 0;
  if (e.attention) return static_cast<double>(attention_bound(*e.attention, t, storage) / scale_unit(storage, e.scale));
  if (t.profile != Profile::standard) return e.strict;
  // standard: an angle formed in the working format W, its frequency from exp/pow in W and the
  // scaling's intermediates in W. That error is angle_error |t| units of u_W s; bounds count
  // units of the storage format's u_F s.
  const double in_storage_units = unit_roundoff(t.working_format(storage)) / unit_roundoff(storage);
  return e.strict + e.angle_error * e.angle * in_storage_units;
}

ElementError check_element(const ElementSpec& e, std::uint64_t expected_bits, double y, Format f,
                           const Tolerance& t) {
  ElementError r;
  const double expected = to_double(f, expected_bits);
  // A NaN is right exactly where a NaN is expected (propagated from a NaN input; any NaN).
  if (std::isnan(y) || std::isnan(expected)) {
    r.pass = std::isnan(y) && std::isnan(expected);
    r.scaled = r.ulp = r.margin = r.pass ? 0 : std::numeric_limits<double>::infinity();
    return r;
  }
  if (std::isinf(expected) || std::isinf(y)) {
    r.pass = y == expected;
    r.scaled = r.ulp = r.margin = r.pass ? 0 : std::numeric_limits<double>::infinity();
    return r;
  }
  const long double diff = std::fabs(static_cast<long double>(y) - e.exact);
  r.ulp = static_cast<double>(diff / ulp_of(f, e.exact));
  r.scaled = static_cast<double>(diff / scale_unit(f, e.scale));
  const bool same_bits = exact_bits(f, y) == expected_bits;
  const bool zero_either_sign = e.exact == 0 && y == 0 && !e.copied;
  r.bound = scaled_bound(e, t, f);
  // A bound of 0 (exact profile, copied elements) asks for the very bits; a correctly rounded
  // value passes every bound.
  const bool exact_only = r.bound == 0 && !t.scaled_bound;
  r.pass = same_bits || (exact_only ? zero_either_sign : r.scaled <= r.bound);
  if (r.bound > 0) {
    // The correct rounding passes even a user bound below its own rounding error: its margin is
    // then 1, so that margin <= 1 means pass whatever the bound.
    r.margin = r.pass ? std::min(r.scaled / r.bound, 1.0) : r.scaled / r.bound;
  } else {
    r.margin = r.pass ? 0 : std::numeric_limits<double>::infinity();
  }
  return r;
}

}  // namespace posenc::conformance
