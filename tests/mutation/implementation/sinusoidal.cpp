// Sinusoidal rows, embeddings and dot products (SPEC.md section 2.1) in long double.
#include "long_double.hpp"
#include "posenc/reference/sinusoidal.hpp"

namespace posenc::mutation {

Answer sinusoidal_row(const SinusoidalParams& p, std::int64_t position) {
  return answer([&] {
    validate(p);
    validate_sinusoidal_position(position);
    return values_of(ref::sinusoidal_row<L>(p, position));
  });
}

Answer sinusoidal_embed(const SinusoidalParams& p, std::int64_t position, std::span<const double> x) {
  return answer([&] {
    validate(p);
    validate_sinusoidal_position(position);
    validate_input_vector("sinusoidal.x", x, p.d_model);
    return values_of(ref::sinusoidal_embed<L>(p, position, x));
  });
}

Answer sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t b) {
  return answer([&] {
    validate(p);
    validate_sinusoidal_position(a);
    validate_sinusoidal_position(b);
    return values_of(std::vector{ref::sinusoidal_dot<L>(p, a, b)});
  });
}

}  // namespace posenc::mutation

#include "applied.hpp"
