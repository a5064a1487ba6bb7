#pragma once
// Property-based checks (RapidCheck) of any implementation: mathematical facts every correct
// positional encoding satisfies, within the profile's tolerances (SPEC.md §5). A failing property
// is shrunk to a minimal counterexample; `seed` replays it.
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/judge/implementation.hpp"
#include "posenc/judge/profiles.hpp"

namespace posenc::conformance {

struct PropertyResult {
  std::string name;
  Format format = Format::f64;  // the output format its calls asked for
  std::string status;  // passed, failed, unsupported (every generated case was unsupported)
  int cases = 0;       // cases that passed
  std::string counterexample;
};

struct PropertyOptions {
  std::uint64_t seed = 1;
  int cases = 100;
  Tolerance tolerance;
};

std::vector<PropertyResult> run_properties(Implementation& impl, const PropertyOptions& options);

}  // namespace posenc::conformance
