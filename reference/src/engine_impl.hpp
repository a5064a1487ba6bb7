#pragma once
// The definitions of Engine's members (engine.hpp): each runs one formula through the backend's
// precision ladder until its rounding is certified (certify.hpp).
#include <string>
#include <type_traits>

#include "engine.hpp"
#include "posenc/reference/alibi.hpp"
#include "posenc/reference/attention.hpp"
#include "posenc/reference/certify.hpp"
#include "posenc/reference/rope.hpp"
#include "posenc/reference/sinusoidal.hpp"

namespace posenc::ref {

namespace detail {
template <class L, class F>
std::vector<Rounded> run(F&& f, const std::string& what) {
  return certify(L{}, std::forward<F>(f), what);
}
}  // namespace detail

template <class L>
std::vector<Rounded> Engine<L>::sinusoidal_row(const SinusoidalParams& p, std::int64_t position) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) { return ref::sinusoidal_row<R>(p, position); },
                        "sinusoidal row at position " + std::to_string(position));
}

template <class L>
std::vector<Rounded> Engine<L>::sinusoidal_embed(const SinusoidalParams& p, std::int64_t position,
                                                 std::span<const double> x) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) { return ref::sinusoidal_embed<R>(p, position, x); },
                        "sinusoidal embedding at position " + std::to_string(position));
}

template <class L>
std::vector<Rounded> Engine<L>::sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t b) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    return std::vector<Approx<R>>{ref::sinusoidal_dot<R>(p, a, b)};
  }, "sinusoidal dot product");
}

template <class L>
std::vector<Rounded> Engine<L>::rope_frequencies(const RopeParams& p) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    auto f = ref::rope_frequencies<R>(p);
    f.inv_freq.push_back(f.attention_factor);
    return f.inv_freq;
  }, "rope frequencies");
}

template <class L>
std::vector<Rounded> Engine<L>::rope_table_row(const RopeParams& p, std::span<const std::int64_t> pos) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    return ref::rope_table_row<R>(p, ref::rope_frequencies<R>(p), pos);
  }, "rope table row");
}

template <class L>
std::vector<Rounded> Engine<L>::rope_rotate(const RopeParams& p, std::span<const std::int64_t> pos,
                                            std::span<const double> x) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    return ref::rope_rotate<R>(p, ref::rope_frequencies<R>(p), pos, x);
  }, "rope rotation");
}

template <class L>
std::vector<Rounded> Engine<L>::rope_dot(const RopeParams& p, std::span<const std::int64_t> m,
                                         std::span<const std::int64_t> n, std::span<const double> q,
                                         std::span<const double> k) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    return std::vector<Approx<R>>{ref::rope_dot<R>(p, ref::rope_frequencies<R>(p), m, n, q, k)};
  }, "rope dot product");
}

template <class L>
std::vector<Rounded> Engine<L>::alibi_slopes(const AlibiParams& p) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) { return ref::alibi_slopes<R>(p); }, "alibi slopes");
}

template <class L>
std::vector<Rounded> Engine<L>::alibi_bias(const AlibiParams& p, std::int64_t h, std::int64_t i, std::int64_t j) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    return std::vector<Approx<R>>{ref::alibi_bias<R>(p, h, i, j)};
  }, "alibi bias");
}

template <class L>
std::vector<Rounded> Engine<L>::copy(std::span<const double> x) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    std::vector<Approx<R>> out;
    for (double v : x) out.push_back(exact_double<R>(v));
    return out;
  }, "copy");
}

template <class L>
std::vector<Rounded> Engine<L>::attention_scale(const AttentionParams& p) {
  return detail::run<L>([&]<class R>(std::type_identity<R>) {
    return std::vector<Approx<R>>{ref::attention_scale<R>(p)};
  }, "attention scale");
}

template <class L>
std::vector<Rounded> Engine<L>::attention(const AttentionParams& p, const AttentionInputs& in,
                                          std::vector<AttentionTerms>& terms) {
  const auto rows = static_cast<std::size_t>(in.queries * p.query_heads);
  terms.assign(rows, {});
  const auto per_row = certify_each(
      L{}, rows, [&]<class R>(std::type_identity<R>) { return attention_context<R>(p, in); },
      [&]<class R>(const AttentionContext<R>& c, std::size_t row) {
        const auto i = static_cast<std::int64_t>(row) / p.query_heads;
        const auto h = static_cast<std::int64_t>(row) % p.query_heads;
        return attention_row(p, in, c, i, h, terms[row]);
      },
      "attention");
  // O of every row, then L of every row (SPEC.md section 2.7's output order).
  std::vector<Rounded> out;
  const auto dv = static_cast<std::size_t>(p.value_dim);
  out.reserve(rows * (dv + 1));
  for (const auto& r : per_row) out.insert(out.end(), r.begin(), r.begin() + static_cast<std::ptrdiff_t>(dv));
  for (const auto& r : per_row) out.push_back(r[dv]);
  return out;
}

}  // namespace posenc::ref
