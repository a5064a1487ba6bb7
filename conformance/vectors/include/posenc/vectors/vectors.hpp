#pragma once
// The golden-vector data model: what a file of vectors/ holds, typed. One writer and one loader
// (vector_json.hpp) translate it to and from JSON, so the generator and every consumer agree.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "posenc/params.hpp"
#include "posenc/formats.hpp"
#include "posenc/rounded.hpp"

namespace posenc::conformance {

inline constexpr int kVectorFormatVersion = 1;

// What a test group's cases compute. The name is the group's "type" in JSON; case_types.hpp
// describes each type's inputs and outputs.
enum class CaseType {
  sinusoidal_row,
  sinusoidal_embed,
  sinusoidal_dot,
  rope_frequencies,
  rope_table,
  rope_rotate,
  rope_dot,
  alibi_slopes,
  alibi_bias,
  learned_lookup,
  attention,
};

std::string_view to_string(CaseType t);
CaseType parse_case_type(std::string_view s);
std::string_view family_of(CaseType t);

using Params = std::variant<SinusoidalParams, RopeParams, AlibiParams, LearnedParams, AttentionParams>;

// Expected outputs: the exact decimal and the correctly rounded bits per format, per element.
struct Expected {
  std::vector<std::string> exact;
  std::array<std::vector<std::uint64_t>, 4> bits;  // indexed like kAllFormats

  std::size_t size() const { return exact.size(); }
  const std::vector<std::uint64_t>& of(Format f) const { return bits[static_cast<std::size_t>(f)]; }
  static Expected from(const std::vector<Rounded>& values);
  friend bool operator==(const Expected&, const Expected&) = default;
};

// An attention case's tensors (SPEC.md section 4: they live in the file's tensor file, not in its
// JSON), row-major, with the shapes of AttentionInputs; and, for a valid case, the reference's
// ingredients of its error bound (SPEC.md section 5), per O element and per (query row, head).
struct AttentionData {
  std::int64_t queries = 0, keys = 0;
  std::vector<std::int64_t> query_positions, key_positions;
  std::vector<double> q, k, v;
  std::vector<std::uint8_t> mask;  // explicit masks only
  std::vector<double> table;       // given cos/sin rows only
  std::vector<double> kappa, pv;   // [queries][query_heads][value_dim]
  std::vector<double> logit_range;  // [queries][query_heads]

  AttentionInputs inputs() const {
    return {queries, keys, query_positions, key_positions, q, k, v, mask, table};
  }
  friend bool operator==(const AttentionData&, const AttentionData&) = default;
};

// A tensor file holds an exact value as its binary64 rounding plus a binary64 residual, to within
// 2^-63 relative (what the judge measures errors in: long double). residual_of splits the
// reference's decimal so; exact_of writes the sum back as the decimal a loaded case carries
// (21 significant digits). A case's expected values go through both when generated, so a
// generated case and its loaded copy are equal.
double residual_of(const std::string& exact, double f64);
std::string exact_of(double f64, double residual);

// One test case. Which inputs are present depends on the group's CaseType.
struct VectorCase {
  std::int64_t tc_id = 0;
  std::string comment;
  std::vector<std::string> flags;
  bool valid = true;
  std::string error;  // invalid cases: InvalidParameter::parameter() the implementation must report

  std::vector<std::int64_t> position;    // sinusoidal row/embed, learned: 1; rope: one per axis (q's for dot)
  std::vector<std::int64_t> position_b;  // sinusoidal dot: b; rope dot: k's position
  std::int64_t head = 0, query = 0, key = 0;  // alibi bias
  std::vector<double> x;  // rotate/embed input, or q for rope dot
  std::vector<double> y;  // k for rope dot
  AttentionData attention;  // attention cases
  Expected expected;      // valid cases only

  friend bool operator==(const VectorCase&, const VectorCase&) = default;
};

struct VectorGroup {
  CaseType type = CaseType::rope_rotate;
  Params params;
  std::string comment;
  Format input_format = Format::f64;  // every input value is exactly representable in this format
  std::vector<double> table;          // learned_lookup: the [max_positions][dim] table, row-major
  std::vector<VectorCase> tests;
};

struct VectorFile {
  std::string family;
  std::string variant;
  int version = kVectorFormatVersion;
  std::string generator;
  std::uint64_t seed = 0;  // SplitMix64 seed of the random inputs (see SPEC.md)
  std::map<std::string, std::string> notes;  // flag -> meaning
  std::vector<VectorGroup> groups;
  // The tensor file beside the JSON (attention: variant.safetensors) and its SHA-256, which the
  // JSON records so that the MANIFEST's hash of the JSON covers the tensors too. Empty: none.
  std::string tensors, tensors_sha256;

  std::int64_t number_of_tests() const;
  std::string schema() const { return "schema/" + family + ".schema.json"; }
  // Path of the file below vectors/: family/variant.json
  std::string relative_path() const { return family + "/" + variant + ".json"; }
  // Whether the family keeps its cases' tensors in a tensor file (SPEC.md section 4).
  bool has_tensors() const { return family == "attention"; }
  std::string tensors_name() const { return variant + ".safetensors"; }
};

// A case is judged in format F only when all its inputs (x, y and a learned table) are F values:
// an implementation that stores F could not even receive the others (SPEC.md section 3).
bool inputs_exact_in(const VectorGroup& g, const VectorCase& c, Format f);
// The formats of kAllFormats a case is judged in, in that order.
std::vector<Format> judged_formats(const VectorGroup& g, const VectorCase& c);

// The flag of a valid case that is judged in f64 alone, on purpose (full-precision or
// format-edge inputs; the group comment says why). Every other valid case is judged in a
// narrower format too.
inline constexpr std::string_view kF64OnlyFlag = "F64Only";

}  // namespace posenc::conformance
