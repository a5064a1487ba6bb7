#pragma once
// The reference: every output of every family, correctly rounded to f64, f32, bf16 and f16.
// Arguments are validated first (InvalidParameter); a result whose rounding cannot be proven
// within the precision cap throws Uncertifiable.
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/params.hpp"
#include "posenc/reference/attention_terms.hpp"
#include "posenc/rounded.hpp"

namespace posenc::reference {

// mpfr: the golden backend (correctly rounded elementary functions).
// cpp_bin_float: Boost's independent header-only implementation, for cross-checking.
enum class Backend { mpfr, cpp_bin_float };

// d_model values of PE(position), in the params' layout.
std::vector<Rounded> sinusoidal_row(const SinusoidalParams& p, std::int64_t position,
                                    Backend b = Backend::mpfr);
// x * sqrt(d_model) + PE(position); x has d_model elements.
std::vector<Rounded> sinusoidal_embed(const SinusoidalParams& p, std::int64_t position,
                                      std::span<const double> x, Backend b = Backend::mpfr);
Rounded sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t c,
                       Backend b = Backend::mpfr);

// Per-pair inverse frequencies (pair_count() values) followed by the attention factor.
std::vector<Rounded> rope_frequencies(const RopeParams& p, Backend b = Backend::mpfr);
// [m cos t_0 .. m cos t_{n-1}, m sin t_0 .. m sin t_{n-1}] for one position (one value per axis).
std::vector<Rounded> rope_table_row(const RopeParams& p, std::span<const std::int64_t> position,
                                    Backend b = Backend::mpfr);
// x (head_dim values) rotated at position.
std::vector<Rounded> rope_rotate(const RopeParams& p, std::span<const std::int64_t> position,
                                 std::span<const double> x, Backend b = Backend::mpfr);
// q.k with q rotated at position m and k at position n.
Rounded rope_dot(const RopeParams& p, std::span<const std::int64_t> m, std::span<const std::int64_t> n,
                 std::span<const double> q, std::span<const double> k, Backend b = Backend::mpfr);

std::vector<Rounded> alibi_slopes(const AlibiParams& p, Backend b = Backend::mpfr);
Rounded alibi_bias(const AlibiParams& p, std::int64_t head, std::int64_t query, std::int64_t key,
                   Backend b = Backend::mpfr);

// Row `position` of a [max_positions][dim] table given row-major (a copy, rounded per format).
std::vector<Rounded> learned_lookup(const LearnedParams& p, std::span<const double> table,
                                    std::int64_t position, Backend b = Backend::mpfr);

// Attention with its positional encoding inside (SPEC.md section 2.7): O of every (query row,
// query head) ([queries][query_heads][value_dim]), then L of each ([queries][query_heads]), and
// per (query row, query head) the ingredients of the error bound.
struct AttentionResult {
  std::vector<Rounded> values;
  std::vector<AttentionTerms> terms;
};
AttentionResult attention(const AttentionParams& p, const AttentionInputs& in, Backend b = Backend::mpfr);
// The softmax scale (SPEC.md section 2.7): the given scale, or 1/sqrt(denominator) times
// DeepSeek-V2's mscale^2, rounded (the C ABI passes its binary64 value).
Rounded attention_scale(const AttentionParams& p, Backend b = Backend::mpfr);

}  // namespace posenc::reference
