#pragma once
// ALiBi (Press, Smith, Lewis 2022, "Train Short, Test Long"): a per-head linear bias on attention
// scores. Slopes follow the paper's reference code (get_slopes), including non-power-of-two heads.
#include <cstdint>
#include <string_view>

namespace posenc {

enum class AlibiMode {
  causal,     // bias(i, j) = -slope * (i - j), defined for key j <= query i
  symmetric,  // bias(i, j) = -slope * |i - j|
};

struct AlibiParams {
  std::int64_t n_heads = 0;  // [1, 2^20]
  AlibiMode mode = AlibiMode::causal;
  friend bool operator==(const AlibiParams&, const AlibiParams&) = default;
};

// slope_head = 2^(numerator / denominator): the exact exponent, shared by every implementation.
struct AlibiSlopeExponent {
  std::int64_t numerator, denominator;
};
AlibiSlopeExponent alibi_slope_exponent(const AlibiParams& p, std::int64_t head);

void validate(const AlibiParams& p);
void validate_alibi_head(const AlibiParams& p, std::int64_t head);
// Query and key positions in [0, 2^53]; in causal mode key <= query.
void validate_alibi_positions(const AlibiParams& p, std::int64_t query, std::int64_t key);

std::string_view to_string(AlibiMode v);
AlibiMode parse_alibi_mode(std::string_view s);

}  // namespace posenc
