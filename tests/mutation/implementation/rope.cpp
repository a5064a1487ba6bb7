// RoPE frequencies, table rows, rotations and logits (SPEC.md sections 2.3, 2.4) in long double.
#include <limits>

#include "long_double.hpp"
#include "posenc/reference/rope.hpp"

namespace posenc::mutation {

Answer rope_frequencies(const RopeParams& p) {
  return answer([&] {
    validate(p);
    auto f = ref::rope_frequencies<L>(p);
    f.inv_freq.push_back(f.attention_factor);
    return values_of(f.inv_freq);
  });
}

Answer rope_table(const RopeParams& p, std::span<const std::int64_t> position) {
  return answer([&] {
    validate(p);
    validate_rope_positions(p, position);
    return values_of(ref::rope_table_row<L>(p, ref::rope_frequencies<L>(p), position));
  });
}

// A NaN in x makes both elements of its pair NaN and is copied where it is not rotated; every
// other element is the rotation of the NaN-free vector (SPEC.md section 2.3), as IEEE code gets.
Answer rope_rotate(const RopeParams& p, std::span<const std::int64_t> position, std::span<const double> x) {
  return answer([&] {
    validate(p);
    validate_rope_positions(p, position);
    validate_input_vector("rope.x", x, p.head_dim, true);
    std::vector<double> finite(x.begin(), x.end());
    std::vector<bool> nan_out(x.size(), false);
    for (std::size_t j = 0; j < x.size(); ++j) {
      if (std::isnan(x[j])) finite[j] = 0, nan_out[j] = true;
    }
    for (std::int64_t i = 0; i < p.pair_count(); ++i) {
      const auto a = static_cast<std::size_t>(p.pair_first(i)), b = static_cast<std::size_t>(p.pair_second(i));
      if (nan_out.at(a) || nan_out.at(b)) nan_out[a] = nan_out[b] = true;
    }
    auto y = values_of(ref::rope_rotate<L>(p, ref::rope_frequencies<L>(p), position, finite));
    for (std::size_t j = 0; j < y.size() && j < nan_out.size(); ++j) {
      if (nan_out[j]) y[j] = std::numeric_limits<long double>::quiet_NaN();
    }
    return y;
  });
}

Answer rope_dot(const RopeParams& p, std::span<const std::int64_t> q_position, std::span<const std::int64_t> k_position,
                std::span<const double> q, std::span<const double> k) {
  return answer([&] {
    validate(p);
    validate_rope_positions(p, q_position);
    validate_rope_positions(p, k_position);
    validate_input_vector("rope.q", q, p.head_dim);
    validate_input_vector("rope.k", k, p.head_dim);
    return values_of(std::vector{ref::rope_dot<L>(p, ref::rope_frequencies<L>(p), q_position, k_position, q, k)});
  });
}

}  // namespace posenc::mutation

#include "applied.hpp"
