#pragma once
// Builds one vector file: groups of cases, numbered in order, each evaluated by the reference at
// the moment it is added. A case declared invalid must raise exactly the declared parameter's
// error, and a valid one must not raise: a catalogue mistake stops generation.
#include <string>

#include "posenc/vectors/vectors.hpp"
#include "random_inputs.hpp"

namespace posenc::generator {

using conformance::CaseType;
using conformance::Params;
using conformance::VectorCase;
using conformance::VectorFile;
using conformance::VectorGroup;

class FileBuilder {
 public:
  FileBuilder(std::string family, std::string variant, std::uint64_t seed);

  void note(const std::string& flag, const std::string& meaning) { file_.notes[flag] = meaning; }
  // Starts a group; cases added next belong to it.
  VectorGroup& group(CaseType type, Params params, std::string comment, Format input_format = Format::f64);
  // Adds a valid case to the current group and evaluates it; the stored case, with its expected
  // values, so that a catalogue can check that the case is what its flags say.
  const VectorCase& add(VectorCase c);
  // Adds a case whose evaluation must fail on `parameter`.
  void add_invalid(VectorCase c, const std::string& parameter);

  SplitMix64& rng() { return rng_; }
  const VectorGroup& current_group() const { return file_.groups.back(); }
  // The file, with notes kept for exactly the flags its cases use (each must have one).
  VectorFile finish() &&;

 private:
  VectorCase& push(VectorCase c);
  void check_formats(const VectorGroup& g, const VectorCase& c) const;
  VectorFile file_;
  SplitMix64 rng_;
  std::int64_t next_id_ = 1;
};

// Shorthands for cases.
VectorCase at(std::int64_t position, std::string comment, std::vector<std::string> flags = {});
VectorCase at_axes(std::vector<std::int64_t> position, std::string comment, std::vector<std::string> flags = {});

}  // namespace posenc::generator
