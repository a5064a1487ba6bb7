// `posenc conform`: runs an implementation over the golden vectors and judges it by a profile.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <functional>
#include <map>
#include <memory>

#include "commands.hpp"
#include "judging_options.hpp"
#include "numbers.hpp"
#include "fast_adapter.hpp"
#include "hf_vectors.hpp"
#include "text_io.hpp"
#include "posenc/adapters/plugin.hpp"
#include "posenc/adapters/reference.hpp"
#include "posenc/adapters/results_file.hpp"
#include "posenc/judge/runner.hpp"
#include "posenc/reports/html.hpp"
#include "posenc/reports/json.hpp"
#include "posenc/reports/junit.hpp"
#include "posenc/reports/text.hpp"

namespace posenc::cli {
namespace {

std::unique_ptr<conformance::Implementation> make_implementation(const std::string& name, double timeout,
                                                                 std::size_t memory_limit_mib) {
  if (name == "reference") return std::make_unique<conformance::ReferenceImplementation>();
  // fast: the path POSENC_ISA forces, else the best this machine has; fast:ISA names one.
  if (name == "fast") return std::make_unique<conformance::FastImplementation>(fast::selected_isa());
  if (name.starts_with("fast:")) {
    const fast::Isa isa = fast::parse_isa(name.substr(5));
    if (!fast::isa_supported(isa)) {
      throw InvalidParameter("--impl", "'" + name + "'", "a fast path this CPU supports (best here: fast:" +
                                                             std::string(fast::to_string(fast::best_isa())) + ")");
    }
    return std::make_unique<conformance::FastImplementation>(isa);
  }
  if (name.find('/') != std::string::npos || name.ends_with(".so")) {
    return std::make_unique<conformance::PluginImplementation>(name, timeout, memory_limit_mib);
  }
  throw InvalidParameter("--impl", "'" + name + "'",
                         "reference, fast, fast:scalar|avx2|avx512 or the path of a plugin shared library (PATH.so)");
}

// The properties' seed, case count and formats; their tolerance is the run's, known once the
// implementation has declared its working formats (run_vectors).
conformance::PropertyOptions property_options(const ConformOptions& o) {
  conformance::PropertyOptions p;
  const auto seed = parse_int64("--seed", o.seed);
  if (seed < 0) throw InvalidParameter("--seed", o.seed, "an integer >= 0");
  p.seed = static_cast<std::uint64_t>(seed);
  p.cases = static_cast<int>(parse_int64("--property-cases", o.property_cases));
  if (p.cases < 0 || p.cases > 1000000) throw InvalidParameter("--property-cases", o.property_cases, "an integer in [0, 1000000]");
  if (!o.property_formats) return p;
  const std::string allowed = "a list of f64, f32, bf16, f16";
  for (auto part : split_list(*o.property_formats)) {
    try {
      p.formats.push_back(parse_format(part));
    } catch (const InvalidParameter&) {
      throw InvalidParameter("--property-formats", "'" + *o.property_formats + "'", allowed);
    }
  }
  if (p.formats.empty()) throw InvalidParameter("--property-formats", "'" + *o.property_formats + "'", allowed);
  return p;
}

// Runs the implementation `make` builds with the options, prints and writes the reports.
void judge(const ConformOptions& o, const std::function<std::unique_ptr<conformance::Implementation>()>& make,
           const std::string& replay, int& status, bool properties) {
  const conformance::RunOptions options = run_options(o, properties);
  const std::int64_t max_failures = parse_max_failures(o);
  const auto parts = selected_parts(o, properties);
  auto selected = [&](conformance::Part p) { return std::find(parts.begin(), parts.end(), p) != parts.end(); };
  // The properties' options are checked before anything runs.
  const bool run_properties = selected(conformance::Part::properties);
  auto p = run_properties ? property_options(o) : conformance::PropertyOptions{};
  auto impl = make();
  const bool terminal = isatty(STDERR_FILENO) != 0;
  auto report = conformance::run_vectors(*impl, options, [&](std::size_t done, std::size_t total) {
    if (terminal) std::cerr << "\r" << done << "/" << total << " vector files" << (done == total ? "\n" : "") << std::flush;
  });
  report.replay = replay;
  // --property-cases 0 skips them: the part is then not checked.
  if (run_properties && p.cases > 0) {
    p.tolerance = report.tolerance;  // with the working formats the implementation declares
    report.properties = conformance::run_properties(*impl, p);
    report.checks.push_back(conformance::Part::properties);
  }
  conformance::print_summary(std::cout, report, static_cast<std::size_t>(max_failures));
  if (o.report) write_text(*o.report, conformance::report_json(report));
  if (o.junit) write_text(*o.junit, conformance::junit_xml(report));
  if (o.html) write_text(*o.html, conformance::html_report({report}));
  status = report.conformant() ? 0 : 1;
}

// With --hf-config, the model's vectors are generated into a temporary folder, removed when the
// run ends (also on an error).
void judge_vectors(const ConformOptions& o, const std::function<std::unique_ptr<conformance::Implementation>()>& make,
                   const std::string& replay, int& status, bool properties) {
  if (!o.hf_config) return judge(o, make, replay, status, properties);
  TemporaryFolder folder;
  judge(with_hf_config_vectors(o, folder), make, replay, status, properties);
}

}  // namespace

void add_conform_command(Command& app, int& status) {
  auto o = std::make_shared<ConformOptions>();
  Command c = app.add_command("conform", "check an implementation against the golden vectors");
  c.option("--impl", o->impl, "implementation under test: reference, fast (POSENC_ISA or the best path), fast:scalar|avx2|avx512, or PATH.so (a plugin, posenc/plugin.h)")
      .show_default();
  c.option("--timeout", o->timeout, "seconds a plugin may take for one case").show_default();
  c.option("--memory-limit", o->memory_limit, "MiB a plugin may map during one call (its address space is capped)")
      .show_default();
  c.option("--seed", o->seed, "seed of the property-based checks (replays a counterexample)").show_default();
  c.option("--property-cases", o->property_cases, "cases per property (0: skip the properties)")
      .show_default();
  c.option("--property-formats", o->property_formats,
           "output formats to run the properties in, e.g. f64,f32 (default: every format the implementation "
           "answers in)");
  add_judging_options(c, *o);
  c.on_run([o, &status] {
    const double timeout = parse_double("--timeout", o->timeout);
    if (!(timeout > 0)) throw InvalidParameter("--timeout", o->timeout, "a number of seconds > 0");
    const std::int64_t memory = parse_int64("--memory-limit", o->memory_limit);
    if (memory < 16 || memory > (std::int64_t{1} << 30)) {
      throw InvalidParameter("--memory-limit", o->memory_limit, "a number of MiB in [16, 2^30]");
    }
    judge_vectors(*o, [&] { return make_implementation(o->impl, timeout, static_cast<std::size_t>(memory)); },
          replay_command("posenc conform --impl " + shell_quote(o->impl), *o, true), status, true);
  });

  auto v = std::make_shared<ConformOptions>();
  auto results = std::make_shared<std::string>();
  Command r = app.add_command("verify", "check outputs written by code in any language (SPEC.md section 7)");
  r.option("--results", *results, "results file").required();
  add_judging_options(r, *v);
  r.on_run([v, results, &status] {
    judge_vectors(*v, [&] { return std::make_unique<conformance::ResultsImplementation>(*results); },
          replay_command("posenc verify --results " + shell_quote(*results), *v, false), status, false);
  });
}

}  // namespace posenc::cli
