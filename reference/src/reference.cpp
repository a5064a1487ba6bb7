#include "posenc/reference/reference.hpp"

#include <cmath>
#include <vector>

#include "engine.hpp"
#include "posenc/reference/learned.hpp"

// Instantiated in engine_mpfr.cpp and engine_cpp_bin_float.cpp.
extern template struct posenc::ref::Engine<posenc::ref::MpfrLadder>;
extern template struct posenc::ref::Engine<posenc::ref::BinLadder>;

namespace posenc::reference {
namespace {

template <class Call>
std::vector<Rounded> dispatch(Backend b, Call&& call) {
  if (b == Backend::mpfr) return call(ref::Engine<ref::MpfrLadder>{});
  return call(ref::Engine<ref::BinLadder>{});
}

}  // namespace

std::vector<Rounded> sinusoidal_row(const SinusoidalParams& p, std::int64_t position, Backend b) {
  validate(p);
  validate_sinusoidal_position(position);
  return dispatch(b, [&](auto e) { return e.sinusoidal_row(p, position); });
}

std::vector<Rounded> sinusoidal_embed(const SinusoidalParams& p, std::int64_t position,
                                      std::span<const double> x, Backend b) {
  validate(p);
  validate_sinusoidal_position(position);
  validate_input_vector("sinusoidal.x", x, p.d_model);
  return dispatch(b, [&](auto e) { return e.sinusoidal_embed(p, position, x); });
}

Rounded sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t c, Backend b) {
  validate(p);
  validate_sinusoidal_position(a);
  validate_sinusoidal_position(c);
  return dispatch(b, [&](auto e) { return e.sinusoidal_dot(p, a, c); }).front();
}

std::vector<Rounded> rope_frequencies(const RopeParams& p, Backend b) {
  validate(p);
  return dispatch(b, [&](auto e) { return e.rope_frequencies(p); });
}

std::vector<Rounded> rope_table_row(const RopeParams& p, std::span<const std::int64_t> position,
                                    Backend b) {
  validate(p);
  validate_rope_positions(p, position);
  return dispatch(b, [&](auto e) { return e.rope_table_row(p, position); });
}

std::vector<Rounded> rope_rotate(const RopeParams& p, std::span<const std::int64_t> position,
                                 std::span<const double> x, Backend b) {
  validate(p);
  validate_rope_positions(p, position);
  validate_input_vector("rope.x", x, p.head_dim, true);
  // A NaN makes both elements of its pair NaN and is copied where it is not rotated (the tail);
  // the other elements are the rotation of the NaN-free vector (SPEC.md section 2.3).
  std::vector<bool> nan_out(x.size(), false);
  std::vector<double> finite(x.begin(), x.end());
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (std::isnan(x[j])) finite[j] = 0, nan_out[j] = true;
  }
  for (std::int64_t i = 0; i < p.pair_count(); ++i) {
    const auto a = static_cast<std::size_t>(p.pair_first(i)), c = static_cast<std::size_t>(p.pair_second(i));
    if (nan_out[a] || nan_out[c]) nan_out[a] = nan_out[c] = true;
  }
  auto out = dispatch(b, [&](auto e) { return e.rope_rotate(p, position, std::span<const double>(finite)); });
  for (std::size_t j = 0; j < out.size(); ++j) {
    if (nan_out[j]) out[j] = rounded_nan();
  }
  return out;
}

Rounded rope_dot(const RopeParams& p, std::span<const std::int64_t> m, std::span<const std::int64_t> n,
                 std::span<const double> q, std::span<const double> k, Backend b) {
  validate(p);
  validate_rope_positions(p, m);
  validate_rope_positions(p, n);
  validate_input_vector("rope.q", q, p.head_dim);
  validate_input_vector("rope.k", k, p.head_dim);
  return dispatch(b, [&](auto e) { return e.rope_dot(p, m, n, q, k); }).front();
}

std::vector<Rounded> alibi_slopes(const AlibiParams& p, Backend b) {
  validate(p);
  return dispatch(b, [&](auto e) { return e.alibi_slopes(p); });
}

Rounded alibi_bias(const AlibiParams& p, std::int64_t head, std::int64_t query, std::int64_t key,
                   Backend b) {
  validate_alibi_head(p, head);
  validate_alibi_positions(p, query, key);
  return dispatch(b, [&](auto e) { return e.alibi_bias(p, head, query, key); }).front();
}

std::vector<Rounded> learned_lookup(const LearnedParams& p, std::span<const double> table,
                                    std::int64_t position, Backend b) {
  validate_learned_position(p, position);
  validate_input_vector("learned.table", table, p.parameter_count());
  return dispatch(b, [&](auto e) { return e.copy(ref::learned_row(p, table, position)); });
}

Rounded attention_scale(const AttentionParams& p, Backend b) {
  validate(p);
  return dispatch(b, [&](auto e) { return e.attention_scale(p); }).front();
}

AttentionResult attention(const AttentionParams& p, const AttentionInputs& in, Backend b) {
  validate(p, in);
  AttentionResult out;
  out.values = dispatch(b, [&](auto e) { return e.attention(p, in, out.terms); });
  return out;
}

}  // namespace posenc::reference
