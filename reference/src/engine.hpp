#pragma once
// Binds the formulas to one backend's precision ladder. Arguments are already validated.
// Only declarations here: the definitions (engine_impl.hpp) are compiled once per backend, in
// engine_mpfr.cpp and engine_cpp_bin_float.cpp. Members defined in the class would be inline, and
// an optimizing compiler instantiates inline members for inlining even behind `extern template`,
// so reference.cpp would compile both multiprecision engines a second time.
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/params.hpp"
#include "posenc/reference/attention_terms.hpp"
#include "posenc/reference/backends.hpp"
#include "posenc/rounded.hpp"

namespace posenc::ref {

template <class L>
struct Engine {
  static std::vector<Rounded> sinusoidal_row(const SinusoidalParams& p, std::int64_t position);
  static std::vector<Rounded> sinusoidal_embed(const SinusoidalParams& p, std::int64_t position,
                                               std::span<const double> x);
  static std::vector<Rounded> sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t b);
  static std::vector<Rounded> rope_frequencies(const RopeParams& p);
  static std::vector<Rounded> rope_table_row(const RopeParams& p, std::span<const std::int64_t> pos);
  static std::vector<Rounded> rope_rotate(const RopeParams& p, std::span<const std::int64_t> pos,
                                          std::span<const double> x);
  static std::vector<Rounded> rope_dot(const RopeParams& p, std::span<const std::int64_t> m,
                                       std::span<const std::int64_t> n, std::span<const double> q,
                                       std::span<const double> k);
  static std::vector<Rounded> alibi_slopes(const AlibiParams& p);
  static std::vector<Rounded> alibi_bias(const AlibiParams& p, std::int64_t h, std::int64_t i, std::int64_t j);
  static std::vector<Rounded> copy(std::span<const double> x);
  // The softmax scale of SPEC.md section 2.7.
  static std::vector<Rounded> attention_scale(const AttentionParams& p);
  // O then L of every (query row, query head), with the rows' bound ingredients.
  static std::vector<Rounded> attention(const AttentionParams& p, const AttentionInputs& in,
                                        std::vector<AttentionTerms>& terms);
};

}  // namespace posenc::ref
