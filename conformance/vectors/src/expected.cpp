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
          [&](const cases::Attention& k) { return r::attention(k.p, k.in, b).values; },
      },
      typed_case(g, c));
}

void fill_expected(const VectorGroup& g, VectorCase& c, reference::Backend b) {
  if (g.type != CaseType::attention) {
    c.expected = Expected::from(evaluate_reference(g, c, b));
    return;
  }
  const auto& p = std::get<AttentionParams>(g.params);
  auto result = reference::attention(p, c.attention.inputs(), b);
  c.expected = Expected::from(result.values);
  for (std::size_t i = 0; i < c.expected.size(); ++i) {
    const double f64 = to_double(Format::f64, c.expected.of(Format::f64)[i]);
    c.expected.exact[i] = exact_of(f64, residual_of(c.expected.exact[i], f64));
  }
  AttentionData& a = c.attention;
  a.kappa.clear();
  a.pv.clear();
  a.logit_range.clear();
  for (const auto& row : result.terms) {
    a.kappa.insert(a.kappa.end(), row.kappa.begin(), row.kappa.end());
    a.pv.insert(a.pv.end(), row.pv.begin(), row.pv.end());
    a.logit_range.push_back(row.logit_range);
  }
}

}  // namespace posenc::conformance
