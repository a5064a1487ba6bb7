#include "check.hpp"
#include "posenc/params/choices.hpp"
#include "posenc/params/sinusoidal.hpp"

namespace posenc {
namespace {
constexpr std::array kSinusoidalLayouts{"interleaved", "concatenated"};
constexpr std::array kFrequencies{"paper", "tensor2tensor"};
}  // namespace

std::vector<ParameterChoices> sinusoidal_choices() {
  return {{"sinusoidal", "sinusoidal.layout", kSinusoidalLayouts}, {"sinusoidal", "sinusoidal.frequencies", kFrequencies}};
}

void validate(const SinusoidalParams& p) {
  check::even_at_least("sinusoidal.d_model", p.d_model, 2);
  check::in_range("sinusoidal.d_model", p.d_model, 2, std::int64_t{1} << 20);
  check::finite_above("sinusoidal.base", p.base, 1.0);
}

void validate_sinusoidal_position(std::int64_t position) {
  check::in_range("sinusoidal.position", position, 0, check::kMaxAbsolutePosition);
}

std::string_view to_string(SinusoidalLayout v) { return kSinusoidalLayouts[static_cast<std::size_t>(v)]; }
std::string_view to_string(SinusoidalFrequencies v) {
  return kFrequencies[static_cast<std::size_t>(v)];
}

SinusoidalLayout parse_sinusoidal_layout(std::string_view s) {
  return check::parse_enum<SinusoidalLayout>("sinusoidal.layout", s, kSinusoidalLayouts);
}
SinusoidalFrequencies parse_sinusoidal_frequencies(std::string_view s) {
  return check::parse_enum<SinusoidalFrequencies>("sinusoidal.frequencies", s, kFrequencies);
}

}  // namespace posenc
