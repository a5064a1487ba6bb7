#pragma once
// The implementation under test that a mutant is: every family's outputs computed by the
// reference's own definitions (reference/include/posenc/reference/*.hpp and the shared formulas
// of spec/include/posenc/formulas/) instantiated with Approx<long double>, so that each value is
// a long double evaluation of the formula as the mutant's copy of its file writes it. A mutant's
// shared library (tests/mutation/CMakeLists.txt) exports the table below; the judge harness
// (tests/mutation/judge.cpp), built from the unmutated sources, loads it, rounds each value to
// the format asked and judges it on the shipped vectors.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "posenc/params.hpp"

namespace posenc::mutation {

struct Answer {
  enum class Status { ok, invalid, failed };
  Status status = Status::ok;
  std::vector<long double> values;
  std::string message;  // invalid: the refusal (it names the parameter); failed: why
};

// One entry per case type (SPEC.md section 4), arguments as conformance::cases holds them.
struct Families {
  Answer (*sinusoidal_row)(const SinusoidalParams& p, std::int64_t position);
  Answer (*sinusoidal_embed)(const SinusoidalParams& p, std::int64_t position, std::span<const double> x);
  Answer (*sinusoidal_dot)(const SinusoidalParams& p, std::int64_t a, std::int64_t b);
  Answer (*rope_frequencies)(const RopeParams& p);
  Answer (*rope_table)(const RopeParams& p, std::span<const std::int64_t> position);
  Answer (*rope_rotate)(const RopeParams& p, std::span<const std::int64_t> position, std::span<const double> x);
  Answer (*rope_dot)(const RopeParams& p, std::span<const std::int64_t> q_position,
                     std::span<const std::int64_t> k_position, std::span<const double> q, std::span<const double> k);
  Answer (*alibi_slopes)(const AlibiParams& p);
  Answer (*alibi_bias)(const AlibiParams& p, std::int64_t head, std::int64_t query, std::int64_t key);
  Answer (*learned_lookup)(const LearnedParams& p, std::span<const double> table, std::int64_t position);
  Answer (*attention)(const AttentionParams& p, const AttentionInputs& in);
};

// Each family's entry points (one translation unit per family, so that a mutant rebuilds only
// the units that include its file).
Answer sinusoidal_row(const SinusoidalParams& p, std::int64_t position);
Answer sinusoidal_embed(const SinusoidalParams& p, std::int64_t position, std::span<const double> x);
Answer sinusoidal_dot(const SinusoidalParams& p, std::int64_t a, std::int64_t b);
Answer rope_frequencies(const RopeParams& p);
Answer rope_table(const RopeParams& p, std::span<const std::int64_t> position);
Answer rope_rotate(const RopeParams& p, std::span<const std::int64_t> position, std::span<const double> x);
Answer rope_dot(const RopeParams& p, std::span<const std::int64_t> q_position, std::span<const std::int64_t> k_position,
                std::span<const double> q, std::span<const double> k);
Answer alibi_slopes(const AlibiParams& p);
Answer alibi_bias(const AlibiParams& p, std::int64_t head, std::int64_t query, std::int64_t key);
Answer learned_lookup(const LearnedParams& p, std::span<const double> table, std::int64_t position);
Answer attention(const AttentionParams& p, const AttentionInputs& in);

}  // namespace posenc::mutation

// The one symbol a mutant's library exports (everything else is hidden, so that its copies of
// the formulas never stand in for the harness's, nor the harness's for its).
extern "C" const posenc::mutation::Families* posenc_mutant_families();
