#pragma once
// The names an enumerated parameter accepts, per family, from the same tables the parsers use
// (what `posenc list` shows).
#include <span>
#include <string_view>
#include <vector>

namespace posenc {

struct ParameterChoices {
  std::string_view family;     // sinusoidal, rope, alibi, attention
  std::string_view parameter;  // as errors name it, e.g. rope.scaling.kind
  std::span<const char* const> values;
};

std::vector<ParameterChoices> sinusoidal_choices();
std::vector<ParameterChoices> rope_choices();
std::vector<ParameterChoices> alibi_choices();
std::vector<ParameterChoices> attention_choices();

}  // namespace posenc
