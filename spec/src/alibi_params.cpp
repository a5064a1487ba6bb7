#include <bit>

#include "check.hpp"
#include "posenc/params/choices.hpp"
#include "posenc/params/alibi.hpp"

namespace posenc {
namespace {
constexpr std::array kModes{"causal", "symmetric"};
}  // namespace

std::vector<ParameterChoices> alibi_choices() { return {{"alibi", "alibi.mode", kModes}}; }

AlibiSlopeExponent alibi_slope_exponent(const AlibiParams& p, std::int64_t head) {
  const auto m = static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(p.n_heads)));
  if (head < m) return {-8 * (head + 1), m};
  return {-4 * (2 * (head - m) + 1), m};
}

void validate(const AlibiParams& p) {
  check::in_range("alibi.n_heads", p.n_heads, 1, std::int64_t{1} << 20);
}

void validate_alibi_head(const AlibiParams& p, std::int64_t head) {
  validate(p);
  check::in_range("alibi.head", head, 0, p.n_heads - 1);
}

void validate_alibi_positions(const AlibiParams& p, std::int64_t query, std::int64_t key) {
  validate(p);
  check::in_range("alibi.query_position", query, 0, check::kMaxAbsolutePosition);
  check::in_range("alibi.key_position", key, 0, check::kMaxAbsolutePosition);
  if (p.mode == AlibiMode::causal && key > query) {
    check::fail("alibi.key_position", check::format_value(key),
                "<= query_position (" + check::format_value(query) + ") in causal mode");
  }
}

std::string_view to_string(AlibiMode v) { return kModes[static_cast<std::size_t>(v)]; }

AlibiMode parse_alibi_mode(std::string_view s) {
  return check::parse_enum<AlibiMode>("alibi.mode", s, kModes);
}

}  // namespace posenc
