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
  // (passed when RapidCheck gave up for too many unsupported cases after some passed: cases says how many)
  int cases = 0;       // cases that passed
  std::string counterexample;
};

struct PropertyOptions {
  std::uint64_t seed = 1;
  int cases = 100;
  Tolerance tolerance;
  // The output formats to run every property in (--property-formats); empty: answered_formats.
  std::vector<Format> formats;
};

// The formats the implementation answers in: those where a small RoPE rotation, sinusoidal row,
// ALiBi slopes or one-key attention case gets an answer other than unsupported (for a plugin, the
// formats whose rope/sinusoidal/alibi/attention entry points answer; the fast path: f32, bf16, f16).
std::vector<Format> answered_formats(Implementation& impl);

// Every property in each format, in the order of the formats.
std::vector<PropertyResult> run_properties(Implementation& impl, const PropertyOptions& options);

}  // namespace posenc::conformance
