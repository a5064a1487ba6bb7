#include "posenc/vectors/case_types.hpp"

#include <algorithm>
#include <array>

#include "posenc/errors.hpp"

namespace posenc::conformance {
namespace {

using P = PositionInput;

// Indexed by CaseType. Fields: name, family, positions, x, nan_inputs, alibi_indices, table, outputs.
constexpr std::array<CaseTypeInfo, 11> kInfo{{
    {"sinusoidal_row", "sinusoidal", P::one, false, false, false, false, "PE(position): d_model values"},
    {"sinusoidal_embed", "sinusoidal", P::one, true, false, false, false,
     "x * sqrt(d_model) + PE(position): d_model values"},
    {"sinusoidal_dot", "sinusoidal", P::two, false, false, false, false, "PE(a) . PE(b): 1 value"},
    {"rope_frequencies", "rope", P::none, false, false, false, false,
     "inv_freq per pair, then the attention factor: pair_count + 1 values"},
    {"rope_table", "rope", P::per_axis, false, false, false, false,
     "[m cos t_i ..., m sin t_i ...] at position: 2 pair_count values"},
    {"rope_rotate", "rope", P::per_axis, true, true, false, false, "x rotated at position: head_dim values"},
    {"rope_dot", "rope", P::sides, true, false, false, false, "(R(m) q) . (R(n) k): 1 value"},
    {"alibi_slopes", "alibi", P::none, false, false, false, false, "the slope of every head: n_heads values"},
    {"alibi_bias", "alibi", P::none, false, false, true, false, "bias(head, query, key): 1 value"},
    {"learned_lookup", "learned", P::one, false, false, false, true, "row `position` of the group's table: dim values"},
    {"attention", "attention", P::tensors, false, false, false, false,
     "O [queries][query_heads][value_dim], then L [queries][query_heads]"},
}};

std::size_t count(std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 0)); }

}  // namespace

const CaseTypeInfo& info(CaseType t) { return kInfo.at(static_cast<std::size_t>(t)); }

std::string_view to_string(CaseType t) { return info(t).name; }

CaseType parse_case_type(std::string_view s) {
  for (std::size_t i = 0; i < kInfo.size(); ++i) {
    if (s == kInfo[i].name) return static_cast<CaseType>(i);
  }
  throw InvalidParameter("type", "'" + std::string(s) + "'", "a known test group type");
}

std::string_view family_of(CaseType t) { return info(t).family; }

namespace cases {

std::size_t SinusoidalRow::outputs() const { return count(p.d_model); }
std::size_t SinusoidalEmbed::outputs() const { return count(p.d_model); }
std::size_t RopeFrequencies::outputs() const { return count(p.pair_count()) + 1; }
std::size_t RopeTable::outputs() const { return 2 * count(p.pair_count()); }
std::size_t RopeRotate::outputs() const { return count(p.head_dim); }
std::size_t AlibiSlopes::outputs() const { return count(p.n_heads); }
std::size_t LearnedLookup::outputs() const { return count(p.dim); }
std::size_t Attention::outputs() const {
  return in.queries < 0 || p.query_heads < 0 || p.value_dim < 0 ? 0 : count(attention_outputs(p, in.queries));
}

}  // namespace cases

TypedCase typed_case(const VectorGroup& g, const VectorCase& c) {
  switch (g.type) {
    case CaseType::sinusoidal_row:
      return cases::SinusoidalRow{std::get<SinusoidalParams>(g.params), c.position.at(0)};
    case CaseType::sinusoidal_embed:
      return cases::SinusoidalEmbed{std::get<SinusoidalParams>(g.params), c.position.at(0), c.x};
    case CaseType::sinusoidal_dot:
      return cases::SinusoidalDot{std::get<SinusoidalParams>(g.params), c.position.at(0), c.position_b.at(0)};
    case CaseType::rope_frequencies:
      return cases::RopeFrequencies{std::get<RopeParams>(g.params)};
    case CaseType::rope_table:
      return cases::RopeTable{std::get<RopeParams>(g.params), c.position};
    case CaseType::rope_rotate:
      return cases::RopeRotate{std::get<RopeParams>(g.params), c.position, c.x};
    case CaseType::rope_dot:
      return cases::RopeDot{std::get<RopeParams>(g.params), c.position, c.position_b, c.x, c.y};
    case CaseType::alibi_slopes:
      return cases::AlibiSlopes{std::get<AlibiParams>(g.params)};
    case CaseType::alibi_bias:
      return cases::AlibiBias{std::get<AlibiParams>(g.params), c.head, c.query, c.key};
    case CaseType::learned_lookup:
      return cases::LearnedLookup{std::get<LearnedParams>(g.params), g.table, c.position.at(0)};
    case CaseType::attention:
      return cases::Attention{std::get<AttentionParams>(g.params), c.attention.inputs()};
  }
  throw Error("posenc: unknown case type " + std::to_string(static_cast<int>(g.type)));
}

std::size_t output_count(const VectorGroup& g, const VectorCase& c) {
  return std::visit([](const auto& k) { return k.outputs(); }, typed_case(g, c));
}

}  // namespace posenc::conformance
