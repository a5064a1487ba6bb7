#pragma once
// One description of each case type: what its cases carry (the JSON fields of SPEC.md section 3),
// what they answer and how many values, and a typed view of a case. Everything that needs to know
// a case type (the JSON reader and writer, the reference's evaluation, the adapters, the profiles,
// the properties) reads this instead of switching on CaseType itself: `typed_case` is the one
// switch, and its users std::visit the result with one handler per type, which the compiler
// checks for completeness.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "posenc/vectors/vectors.hpp"

namespace posenc::conformance {

// The positions a case carries.
enum class PositionInput {
  none,
  one,       // "position": one integer
  per_axis,  // "position": one per M-RoPE axis
  two,       // "positions": a and b
  sides,     // "qPosition" and "kPosition", each one per axis
  tensors,   // in the file's tensor file, with the case's other tensors (attention)
};

struct CaseTypeInfo {
  std::string_view name;  // the group's "type" in JSON
  std::string_view family;
  PositionInput positions;
  bool x;              // an input vector: "x", or "q" and "k" (sides)
  bool nan_inputs;     // x may hold NaN: defined for RoPE's rotation only (SPEC.md section 2.3)
  bool alibi_indices;  // "head", "queryPosition", "keyPosition"
  bool table;          // the group's "table"
  std::string_view outputs;  // what the expected values are
};

const CaseTypeInfo& info(CaseType t);

// Typed views of a case: references into the group and the case, valid while they live.
namespace cases {

struct SinusoidalRow {
  const SinusoidalParams& p;
  std::int64_t position;
  std::size_t outputs() const;
};
struct SinusoidalEmbed {
  const SinusoidalParams& p;
  std::int64_t position;
  std::span<const double> x;
  std::size_t outputs() const;
};
// PE(a) . PE(b): an implementation that only writes rows answers it through SinusoidalRow.
struct SinusoidalDot {
  const SinusoidalParams& p;
  std::int64_t a, b;
  std::size_t outputs() const { return 1; }
};
struct RopeFrequencies {
  const RopeParams& p;
  std::size_t outputs() const;  // inv_freq per pair, then the attention factor
};
struct RopeTable {
  const RopeParams& p;
  std::span<const std::int64_t> position;  // one per axis
  std::size_t outputs() const;             // m cos t_i for every pair, then m sin t_i
};
struct RopeRotate {
  const RopeParams& p;
  std::span<const std::int64_t> position;
  std::span<const double> x;
  std::size_t outputs() const;
};
// (R(m) q) . (R(n) k): an implementation that only rotates answers it through RopeRotate.
struct RopeDot {
  const RopeParams& p;
  std::span<const std::int64_t> q_position, k_position;
  std::span<const double> q, k;
  std::size_t outputs() const { return 1; }
};
struct AlibiSlopes {
  const AlibiParams& p;
  std::size_t outputs() const;
};
struct AlibiBias {
  const AlibiParams& p;
  std::int64_t head, query, key;
  std::size_t outputs() const { return 1; }
};
struct LearnedLookup {
  const LearnedParams& p;
  std::span<const double> table;  // [max_positions][dim], row-major
  std::int64_t position;
  std::size_t outputs() const;
};
// O of every (query row, query head), then L of each (SPEC.md section 2.7).
struct Attention {
  const AttentionParams& p;
  AttentionInputs in;
  std::size_t outputs() const;
};

}  // namespace cases

using TypedCase = std::variant<cases::SinusoidalRow, cases::SinusoidalEmbed, cases::SinusoidalDot,
                               cases::RopeFrequencies, cases::RopeTable, cases::RopeRotate, cases::RopeDot,
                               cases::AlibiSlopes, cases::AlibiBias, cases::LearnedLookup, cases::Attention>;

// The case as its type's view. The group's params must be its family's (the loader checks it).
TypedCase typed_case(const VectorGroup& g, const VectorCase& c);

// How many values a correct answer to the case has (0 for sizes the parameters make invalid).
std::size_t output_count(const VectorGroup& g, const VectorCase& c);

// One lambda per alternative: std::visit(overloaded{[](const cases::RopeRotate& r) {...}, ...}, typed_case(g, c)).
template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

}  // namespace posenc::conformance
