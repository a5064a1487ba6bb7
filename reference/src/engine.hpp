#pragma once
// Binds the formulas to one backend's precision ladder. Arguments are already validated.
#include <string>

#include "posenc/reference/alibi.hpp"
#include "posenc/reference/certify.hpp"
#include "posenc/reference/rope.hpp"
#include "posenc/reference/sinusoidal.hpp"

namespace posenc::ref {

template <class L>
struct Engine {
  template <class F>
  static std::vector<Rounded> run(F&& f, const std::string& what) {
    return certify(L{}, std::forward<F>(f), what);
  }

  static std::vector<Rounded> sinusoidal_row(const SinusoidalParams& p, std::int64_t position) {
    return run([&]<class R>(std::type_identity<R>) { return ref::sinusoidal_row<R>(p, position); },
               "sinusoidal row at position " + std::to_string(position));
  }

  static std::vector<Rounded> sinusoidal_embed(const SinusoidalParams& p, std::int64_t position,
                                               std::span<const double> x) {
    return run([&]<class R>(std::type_identity<R>) { return ref::sinusoidal_embed<R>(p, position, x); },
               "sinusoidal embedding at position " + std::to_string(position));
  }

  static std::vector<Rounded> sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t b) {
    return run([&]<class R>(std::type_identity<R>) {
      return std::vector<Approx<R>>{ref::sinusoidal_dot<R>(p, a, b)};
    }, "sinusoidal dot product");
  }

  static std::vector<Rounded> rope_frequencies(const RopeParams& p) {
    return run([&]<class R>(std::type_identity<R>) {
      auto f = ref::rope_frequencies<R>(p);
      f.inv_freq.push_back(f.attention_factor);
      return f.inv_freq;
    }, "rope frequencies");
  }

  static std::vector<Rounded> rope_table_row(const RopeParams& p, std::span<const std::int64_t> pos) {
    return run([&]<class R>(std::type_identity<R>) {
      return ref::rope_table_row<R>(p, ref::rope_frequencies<R>(p), pos);
    }, "rope table row");
  }

  static std::vector<Rounded> rope_rotate(const RopeParams& p, std::span<const std::int64_t> pos,
                                          std::span<const double> x) {
    return run([&]<class R>(std::type_identity<R>) {
      return ref::rope_rotate<R>(p, ref::rope_frequencies<R>(p), pos, x);
    }, "rope rotation");
  }

  static std::vector<Rounded> rope_dot(const RopeParams& p, std::span<const std::int64_t> m,
                                       std::span<const std::int64_t> n, std::span<const double> q,
                                       std::span<const double> k) {
    return run([&]<class R>(std::type_identity<R>) {
      return std::vector<Approx<R>>{ref::rope_dot<R>(p, ref::rope_frequencies<R>(p), m, n, q, k)};
    }, "rope dot product");
  }

  static std::vector<Rounded> alibi_slopes(const AlibiParams& p) {
    return run([&]<class R>(std::type_identity<R>) { return ref::alibi_slopes<R>(p); }, "alibi slopes");
  }

  static std::vector<Rounded> alibi_bias(const AlibiParams& p, std::int64_t h, std::int64_t i,
                                         std::int64_t j) {
    return run([&]<class R>(std::type_identity<R>) {
      return std::vector<Approx<R>>{ref::alibi_bias<R>(p, h, i, j)};
    }, "alibi bias");
  }

  static std::vector<Rounded> copy(std::span<const double> x) {
    return run([&]<class R>(std::type_identity<R>) {
      std::vector<Approx<R>> out;
      for (double v : x) out.push_back(exact_double<R>(v));
      return out;
    }, "copy");
  }
};

}  // namespace posenc::ref
