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

std::vector<PropertyResult> run_properties(Implementation& impl, const PropertyOptions& options) {
  read_rapidcheck_configuration_quietly();
  std::vector<properties::Named> all = properties::rope_properties();
  for (auto group : {properties::absolute_properties(), properties::model_properties()}) {
    all.insert(all.end(), group.begin(), group.end());
  }
  properties::set_format(impl.property_format());
  std::vector<PropertyResult> out;
  for (const auto& [name, property] : all) {
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
      r.status = "unsupported";
      r.cases = gave_up.numSuccess;
    } else {
      r.status = "failed";
      r.counterexample = "the property could not run";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace posenc::conformance
