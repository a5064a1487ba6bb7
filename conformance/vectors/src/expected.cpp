#include "posenc/vectors/expected.hpp"

#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance {

std::vector<Rounded> evaluate_reference(const VectorGroup& g, const VectorCase& c, reference::Backend b) {
  namespace r = reference;
  using V = std::vector<Rounded>;
  return std::visit(
      overloaded{
          [&](const cases::SinusoidalRow& k) { return r::sinusoidal_row(k.p, k.position, b); },
          [&](const cases::SinusoidalEmbed& k) { return r::sinusoidal_embed(k.p, k.position, k.x, b); },
          [&](const cases::SinusoidalDot& k) { return V{r::sinusoidal_dot(k.p, k.a, k.b, b)}; },
          [&](const cases::RopeFrequencies& k) { return r::rope_frequencies(k.p, b); },
          [&](const cases::RopeTable& k) { return r::rope_table_row(k.p, k.position, b); },
          [&](const cases::RopeRotate& k) { return r::rope_rotate(k.p, k.position, k.x, b); },
          [&](const cases::RopeDot& k) { return V{r::rope_dot(k.p, k.q_position, k.k_position, k.q, k.k, b)}; },
          [&](const cases::AlibiSlopes& k) { return r::alibi_slopes(k.p, b); },
          [&](const cases::AlibiBias& k) { return V{r::alibi_bias(k.p, k.head, k.query, k.key, b)}; },
          [&](const cases::LearnedLookup& k) { return r::learned_lookup(k.p, k.table, k.position, b); },
      },
      typed_case(g, c));
}

}  // namespace posenc::conformance
