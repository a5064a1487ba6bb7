#include "posenc/judge/properties.hpp"

#include <rapidcheck.h>
#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/TestListenerAdapter.h>

#include <iostream>
#include <sstream>

#include "property_support.hpp"

namespace posenc::conformance {

namespace {

// RapidCheck prints "Using configuration: seed=..." on std::cerr when its global configuration
// is first read; the checks below never use that configuration (each gets the run's seed in
// its TestParams), so a line naming another seed would only mislead. Read it once, silenced.
void read_rapidcheck_configuration_quietly() {
  static const bool read = [] {
    std::ostringstream sink;
    std::streambuf* const err = std::cerr.rdbuf(sink.rdbuf());
    (void)rc::detail::configuration();
    std::cerr.rdbuf(err);
    return true;
  }();
  (void)read;
}

}  // namespace

std::vector<Format> answered_formats(Implementation& impl) {
  using namespace properties;
  RopeParams rope;
  rope.head_dim = 2;
  rope.rotary_dim = 2;
  SinusoidalParams sinusoidal;
  sinusoidal.d_model = 2;
  AlibiParams alibi;
  alibi.n_heads = 1;
  AttentionParams attention;
  attention.head_dim = attention.value_dim = 2;
  attention.query_heads = attention.kv_heads = 1;
  VectorCase one_key;
  one_key.attention.queries = one_key.attention.keys = 1;
  one_key.attention.query_positions = one_key.attention.key_positions = {0};
  one_key.attention.q = one_key.attention.k = one_key.attention.v = {1.0, 0.5};
  // Inputs exact in every format (1, 0.5; positions are integers).
  const std::pair<VectorGroup, VectorCase> probes[] = {
      {group_of(CaseType::rope_rotate, rope), rope_case(rope, 1, {1.0, 0.5})},
      {group_of(CaseType::sinusoidal_row, sinusoidal), position_case(1)},
      {group_of(CaseType::alibi_slopes, alibi), VectorCase{}},
      {group_of(CaseType::attention, attention), one_key},
  };
  std::vector<Format> out;
  for (Format f : kAllFormats) {
    const Format one[] = {f};
    for (const auto& [g, c] : probes) {
      if (impl.run(g, c, one).at(0).status != Status::unsupported) {
        out.push_back(f);
        break;
      }
    }
  }
  return out;
}

namespace {

// One property in the format properties::format() names.
PropertyResult run_property(Implementation& impl, const PropertyOptions& options, const std::string& name,
                            const properties::Property& property) {
  rc::detail::TestParams params;
  params.seed = options.seed;
  params.maxSuccess = options.cases;
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  // A silent listener: the report carries the outcome, and RapidCheck's own "to reproduce, set
  // RC_PARAMS" hint would not replay a run of posenc conform (its --seed does).
  rc::detail::TestListenerAdapter quiet;
  const auto result = rc::detail::checkTestable([&, p = property] { p(impl, options.tolerance); }, metadata, params,
                                                quiet);
  PropertyResult r;
  r.name = name;
  r.format = properties::format();
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  if (result.match(success)) {
    r.status = "passed";
    r.cases = success.numSuccess;
  } else if (result.match(failure)) {
    r.status = "failed";
    r.cases = failure.numSuccess;
    // RapidCheck's description starts with the source line of the failed check; keep the message.
    std::string text = failure.description;
    if (auto colon = text.find(":\n"); colon != std::string::npos) text = text.substr(colon + 2);
    if (auto blank = text.find("\n\n"); blank != std::string::npos) text = text.substr(blank + 2);
    for (auto& ch : text) {
      if (ch == '\n') ch = ' ';
    }
    r.counterexample = text + " (shrunk; replay with --seed " + std::to_string(options.seed) + ")";
  } else if (result.match(gave_up)) {
    // RapidCheck gave up for too many discarded (unsupported) cases: judged on those that ran,
    // unsupported when none did.
    r.status = gave_up.numSuccess > 0 ? "passed" : "unsupported";
    r.cases = gave_up.numSuccess;
  } else {
    r.status = "failed";
    r.counterexample = "the property could not run";
  }
  return r;
}

}  // namespace

std::vector<PropertyResult> run_properties(Implementation& impl, const PropertyOptions& options) {
  read_rapidcheck_configuration_quietly();
  std::vector<properties::Named> all = properties::rope_properties();
  for (auto group :
       {properties::absolute_properties(), properties::model_properties(), properties::attention_properties()}) {
    all.insert(all.end(), group.begin(), group.end());
  }
  const std::vector<Format> formats = options.formats.empty() ? answered_formats(impl) : options.formats;
  std::vector<PropertyResult> out;
  for (Format f : formats) {
    properties::set_format(f);
    for (const auto& [name, property] : all) out.push_back(run_property(impl, options, name, property));
  }
  properties::set_format(Format::f64);
  return out;
}

}  // namespace posenc::conformance
