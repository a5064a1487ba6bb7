#include "posenc/vectors/expected.hpp"

namespace posenc::conformance {

std::vector<Rounded> evaluate_reference(const VectorGroup& g, const VectorCase& c, reference::Backend b) {
  namespace r = reference;
  switch (g.type) {
    case CaseType::sinusoidal_row:
      return r::sinusoidal_row(std::get<SinusoidalParams>(g.params), c.position.at(0), b);
    case CaseType::sinusoidal_embed:
      return r::sinusoidal_embed(std::get<SinusoidalParams>(g.params), c.position.at(0), c.x, b);
    case CaseType::sinusoidal_dot:
      return {r::sinusoidal_dot(std::get<SinusoidalParams>(g.params), c.position.at(0), c.position_b.at(0), b)};
    case CaseType::rope_frequencies:
      return r::rope_frequencies(std::get<RopeParams>(g.params), b);
    case CaseType::rope_table:
      return r::rope_table_row(std::get<RopeParams>(g.params), c.position, b);
    case CaseType::rope_rotate:
      return r::rope_rotate(std::get<RopeParams>(g.params), c.position, c.x, b);
    case CaseType::rope_dot:
      return {r::rope_dot(std::get<RopeParams>(g.params), c.position, c.position_b, c.x, c.y, b)};
    case CaseType::alibi_slopes:
      return r::alibi_slopes(std::get<AlibiParams>(g.params), b);
    case CaseType::alibi_bias:
      return {r::alibi_bias(std::get<AlibiParams>(g.params), c.head, c.query, c.key, b)};
    case CaseType::learned_lookup:
      return r::learned_lookup(std::get<LearnedParams>(g.params), g.table, c.position.at(0), b);
  }
  return {};
}

}  // namespace posenc::conformance
