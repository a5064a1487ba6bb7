#include <array>
#include <cmath>
#include <numeric>

#include "check.hpp"
#include "posenc/params/choices.hpp"
#include "posenc/params/rope.hpp"

namespace posenc {
namespace {

constexpr std::int64_t kMaxHeadDim = std::int64_t{1} << 16;
constexpr std::int64_t kMaxAxes = 4;
constexpr std::int64_t kMaxContext = std::int64_t{1} << 40;

// The scaling kinds that read each optional field; everything else must leave it empty.
void check_fields_used(const RopeScaling& s, bool factor, bool original, bool seq_len, bool yarn,
                       bool attention, bool llama3, bool longrope) {
  auto kind = to_string(s.kind);
  if (!factor) check::absent("rope.scaling.factor", s.factor, kind);
  if (!original) check::absent("rope.scaling.original_max_positions", s.original_max_positions, kind);
  if (!seq_len) check::absent("rope.scaling.seq_len", s.seq_len, kind);
  if (!yarn) {
    check::absent("rope.scaling.beta_fast", s.beta_fast, kind);
    check::absent("rope.scaling.beta_slow", s.beta_slow, kind);
    check::absent("rope.scaling.truncate", s.truncate, kind);
    check::absent("rope.scaling.mscale", s.mscale, kind);
    check::absent("rope.scaling.mscale_all_dim", s.mscale_all_dim, kind);
  }
  if (!attention) check::absent("rope.scaling.attention_factor", s.attention_factor, kind);
  if (!llama3) {
    check::absent("rope.scaling.low_freq_factor", s.low_freq_factor, kind);
    check::absent("rope.scaling.high_freq_factor", s.high_freq_factor, kind);
  }
  if (!longrope) {
    if (!s.short_factor.empty()) {
      check::fail("rope.scaling.short_factor", "(" + std::to_string(s.short_factor.size()) + " values)",
                  "absent for scaling " + check::quoted(kind));
    }
    if (!s.long_factor.empty()) {
      check::fail("rope.scaling.long_factor", "(" + std::to_string(s.long_factor.size()) + " values)",
                  "absent for scaling " + check::quoted(kind));
    }
  }
}

void require_factor(const RopeScaling& s) {
  double f = check::required("rope.scaling.factor", s.factor, to_string(s.kind), "finite and > 0");
  check::finite_above("rope.scaling.factor", f, 0.0);
}

void require_original(const RopeScaling& s) {
  auto v = check::required("rope.scaling.original_max_positions", s.original_max_positions,
                           to_string(s.kind), "an integer in [1, 2^40]");
  check::in_range("rope.scaling.original_max_positions", v, 1, kMaxContext);
}

void require_seq_len(const RopeScaling& s) {
  auto v = check::required("rope.scaling.seq_len", s.seq_len, to_string(s.kind),
                           "an integer in [1, 2^40]");
  check::in_range("rope.scaling.seq_len", v, 1, kMaxContext);
}

void check_optional_positive(std::string_view name, const std::optional<double>& v) {
  if (v) check::finite_above(name, *v, 0.0);
}

void check_factor_array(std::string_view name, const std::vector<double>& values, std::int64_t pairs) {
  if (static_cast<std::int64_t>(values.size()) != pairs) {
    check::fail(name, "(" + std::to_string(values.size()) + " values)",
                "exactly rotary_dim/2 = " + std::to_string(pairs) + " values");
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    check::finite_above(std::string(name) + "[" + std::to_string(i) + "]", values[i], 0.0);
  }
}

void validate_scaling(const RopeParams& p) {
  const RopeScaling& s = p.scaling;
  using K = RopeScalingKind;
  // The d/(d-2) exponent of the NTK formulas needs d > 2.
  auto ntk_dim = [&] {
    if (p.rotary_dim < 4) {
      check::fail("rope.rotary_dim", check::format_value(p.rotary_dim),
                  ">= 4 for scaling " + check::quoted(to_string(s.kind)) + " (exponent d/(d-2))");
    }
  };
  switch (s.kind) {
    case K::none:
      check_fields_used(s, false, false, false, false, false, false, false);
      break;
    case K::linear:
      check_fields_used(s, true, false, false, false, false, false, false);
      require_factor(s);
      break;
    case K::ntk:
      check_fields_used(s, true, false, false, false, false, false, false);
      require_factor(s);
      ntk_dim();
      break;
    case K::dynamic:
      check_fields_used(s, true, true, true, false, false, false, false);
      require_factor(s);
      require_original(s);
      require_seq_len(s);
      ntk_dim();
      break;
    case K::yarn:
      check_fields_used(s, true, true, false, true, true, false, false);
      require_factor(s);
      require_original(s);
      check_optional_positive("rope.scaling.beta_fast", s.beta_fast);
      check_optional_positive("rope.scaling.beta_slow", s.beta_slow);
      if (s.yarn_beta_fast() < s.yarn_beta_slow()) {
        check::fail("rope.scaling.beta_fast", check::format_value(s.yarn_beta_fast()),
                    ">= beta_slow (" + check::format_value(s.yarn_beta_slow()) + ")");
      }
      // Hugging Face treats mscale = 0 as absent (a truthiness test); posenc makes the caller say so.
      check_optional_positive("rope.scaling.mscale", s.mscale);
      check_optional_positive("rope.scaling.mscale_all_dim", s.mscale_all_dim);
      check_optional_positive("rope.scaling.attention_factor", s.attention_factor);
      break;
    case K::llama3: {
      check_fields_used(s, true, true, false, false, false, true, false);
      require_factor(s);
      require_original(s);
      double lo = check::required("rope.scaling.low_freq_factor", s.low_freq_factor, "llama3",
                                  "finite and > 0");
      check::finite_above("rope.scaling.low_freq_factor", lo, 0.0);
      // Equal factors leave the medium band empty (SPEC.md section 2.4; Llama 4's configs).
      double hi = check::required("rope.scaling.high_freq_factor", s.high_freq_factor, "llama3",
                                  "finite and >= low_freq_factor");
      if (!std::isfinite(hi) || !(hi >= lo)) {
        check::fail("rope.scaling.high_freq_factor", check::format_value(hi), "finite and >= " + check::format_value(lo));
      }
      break;
    }
    case K::longrope:
      check_fields_used(s, true, true, true, false, true, false, true);
      require_factor(s);
      require_original(s);
      // ln(original_max_positions) divides the default attention factor.
      check::in_range("rope.scaling.original_max_positions", *s.original_max_positions, 2, kMaxContext);
      require_seq_len(s);
      check_optional_positive("rope.scaling.attention_factor", s.attention_factor);
      check_factor_array("rope.scaling.short_factor", s.short_factor, p.rotary_dim / 2);
      check_factor_array("rope.scaling.long_factor", s.long_factor, p.rotary_dim / 2);
      break;
  }
  if (p.partial == PartialRotary::proportional && s.kind != K::none && s.kind != K::linear) {
    check::fail("rope.scaling.kind", check::quoted(to_string(s.kind)),
                "none or linear with the proportional partial-rotary convention");
  }
}

void validate_mrope(const RopeParams& p) {
  if (p.mrope_section.empty()) return;
  auto axes = static_cast<std::int64_t>(p.mrope_section.size());
  if (axes > kMaxAxes) {
    check::fail("rope.mrope_section", "(" + std::to_string(axes) + " sections)",
                "at most " + std::to_string(kMaxAxes) + " sections");
  }
  if (p.partial == PartialRotary::proportional) {
    check::fail("rope.mrope_section", "(" + std::to_string(axes) + " sections)",
                "empty with the proportional partial-rotary convention");
  }
  for (std::size_t a = 0; a < p.mrope_section.size(); ++a) {
    check::in_range("rope.mrope_section[" + std::to_string(a) + "]", p.mrope_section[a], 1,
                    p.rotary_dim / 2);
  }
  auto sum = std::accumulate(p.mrope_section.begin(), p.mrope_section.end(), std::int64_t{0});
  if (sum != p.rotary_dim / 2) {
    check::fail("rope.mrope_section", "(sum " + std::to_string(sum) + ")",
                "sections summing to rotary_dim/2 = " + std::to_string(p.rotary_dim / 2));
  }
}

}  // namespace

void validate(const RopeParams& p) {
  check::even_at_least("rope.head_dim", p.head_dim, 2);
  check::in_range("rope.head_dim", p.head_dim, 2, kMaxHeadDim);
  check::even_at_least("rope.rotary_dim", p.rotary_dim, 2);
  check::in_range("rope.rotary_dim", p.rotary_dim, 2, p.head_dim);
  check::finite_above("rope.base", p.base, 1.0);
  validate_mrope(p);
  validate_scaling(p);
}

void validate_rope_positions(const RopeParams& p, std::span<const std::int64_t> positions) {
  if (static_cast<std::int64_t>(positions.size()) != p.position_axes()) {
    check::fail("rope.positions", "(" + std::to_string(positions.size()) + " coordinates)",
                "exactly " + std::to_string(p.position_axes()) +
                    " coordinate(s) per token (one per M-RoPE section)");
  }
}

std::int64_t RopeParams::pair_first(std::int64_t i) const {
  return layout == RopeLayout::interleaved ? 2 * i : i;
}

std::int64_t RopeParams::pair_second(std::int64_t i) const {
  return layout == RopeLayout::interleaved ? 2 * i + 1 : i + rotated_span() / 2;
}

std::int64_t RopeParams::pair_axis(std::int64_t i) const {
  std::int64_t end = 0;
  for (std::size_t a = 0; a < mrope_section.size(); ++a) {
    end += mrope_section[a];
    if (i < end) return static_cast<std::int64_t>(a);
  }
  return 0;
}

namespace {
constexpr std::array kRopeLayouts{"interleaved", "half"};
constexpr std::array kPartials{"standard", "proportional"};
constexpr std::array kScalings{"none", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"};

}  // namespace

std::vector<ParameterChoices> rope_choices() {
  return {{"rope", "rope.layout", kRopeLayouts}, {"rope", "rope.partial", kPartials}, {"rope", "rope.scaling.kind", kScalings}};
}

std::string_view to_string(RopeLayout v) { return kRopeLayouts[static_cast<std::size_t>(v)]; }
std::string_view to_string(PartialRotary v) { return kPartials[static_cast<std::size_t>(v)]; }
std::string_view to_string(RopeScalingKind v) { return kScalings[static_cast<std::size_t>(v)]; }

RopeLayout parse_rope_layout(std::string_view s) {
  return check::parse_enum<RopeLayout>("rope.layout", s, kRopeLayouts);
}
PartialRotary parse_partial_rotary(std::string_view s) {
  return check::parse_enum<PartialRotary>("rope.partial", s, kPartials);
}
RopeScalingKind parse_rope_scaling_kind(std::string_view s) {
  return check::parse_enum<RopeScalingKind>("rope.scaling.kind", s, kScalings);
}

}  // namespace posenc
