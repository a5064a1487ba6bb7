// `posenc conform`: runs an implementation over the golden vectors and judges it by a profile.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <functional>
#include <map>
#include <memory>

#include "commands.hpp"
#include "numbers.hpp"
#include "fast_adapter.hpp"
#include "hf_vectors.hpp"
#include "text_io.hpp"
#include "posenc/generator/generate.hpp"
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

struct ConformOptions {
  std::string impl = "reference";
  std::string profile = "strict";
  std::optional<std::string> bound;
  std::string vectors = default_vectors_dir();
  bool own_vectors = false;
  std::vector<std::string> filter, exclude;
  std::optional<std::string> formats;
  std::optional<std::string> working_format;
  std::optional<std::string> max_position;
  std::optional<std::string> checks;
  std::string max_failures = "5";
  std::optional<std::string> report;
  std::optional<std::string> junit;
  std::optional<std::string> html;
  std::string timeout = "10";
  std::string memory_limit = "4096";
  std::string seed = "1";
  std::string property_cases = "100";
  std::optional<std::string> property_formats;
  std::optional<std::string> hf_config;
};

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

// --working-format: one working format W, f32 or f64 (every storage format's angles formed in W),
// or S=W pairs, comma separated (storage S's in W); each storage format at most once.
std::map<Format, Format> parse_working_formats(const std::string& text) {
  const std::string option = "--working-format";
  auto format = [&](std::string_view s, bool working) {
    for (Format f : kAllFormats) {
      if (to_string(f) == s && (!working || f == Format::f32 || f == Format::f64)) return f;
    }
    throw InvalidParameter(option, "'" + std::string(s) + "' in '" + text + "'",
                           working ? "a working format, f32 or f64 (or STORAGE=WORKING pairs such as bf16=f32)"
                                   : "a storage format, one of f64, f32, bf16, f16");
  };
  std::map<Format, Format> out;
  if (text.find('=') == std::string::npos) {
    const Format w = format(text, true);
    for (Format f : kAllFormats) out[f] = w;
    return out;
  }
  for (auto part : split_list(text)) {
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      throw InvalidParameter(option, "'" + text + "'",
                             "one format, or only STORAGE=WORKING pairs ('" + std::string(part) + "' is neither)");
    }
    const Format storage = format(part.substr(0, eq), false);
    if (!out.emplace(storage, format(part.substr(eq + 1), true)).second) {
      throw InvalidParameter(option, "'" + text + "'",
                             "each storage format at most once (" + std::string(to_string(storage)) + " is repeated)");
    }
  }
  return out;
}

// Options both `conform` and `verify` take.
void add_judging_options(Command& c, ConformOptions& o) {
  c.option("--profile", o.profile, "exact, strict or standard (conformance/SPEC.md section 5)")
      .show_default();
  c.option("--bound", o.bound, "explicit bound in scaled units, replacing the profile's");
  c.option("--vectors", o.vectors, "folder of golden vectors with its MANIFEST").show_default();
  c.flag("--own-vectors", o.own_vectors,
              "trust the folder's own MANIFEST (vectors of your own); by default it must be the shipped one");
  c.option("--filter", o.filter,
                "only these vector files: paths (rope/none.json or rope/none: only that file), families (rope) or "
                "globs (rope/y*); several, space- or comma-separated")
      .comma_separated();
  c.option("--exclude", o.exclude, "not these vector files (patterns as for --filter)").comma_separated();
  c.option("--formats", o.formats, "output formats to check, e.g. f32,bf16 (default all four)");
  c.option("--working-format", o.working_format,
           "the format angles and frequencies are formed in, for standard's allowance (SPEC.md section 5): "
           "W (f32 or f64) for every storage format, or STORAGE=W pairs (bf16=f32,f16=f32); default f64 for f64 storage, "
           "f32 for the others, or what the implementation declares");
  c.option("--max-position", o.max_position,
                "judge only valid cases whose positions are all at most N in magnitude (the rest: not judged)");
  c.option("--checks", o.checks,
           "verdict parts to check: accuracy (valid cases), validation (invalid cases), properties; default all "
           "(verify: accuracy,validation)");
  c.option("--max-failures", o.max_failures,
                "failures the text shows per vector file, grouped by test group (the JSON report has all)")
      .show_default();
  c.option("--report", o.report, "write a JSON report to this file");
  c.option("--junit", o.junit, "write JUnit XML to this file");
  c.option("--html", o.html, "write a self-contained HTML report (plots of error against position) to this file");
  c.option("--hf-config", o.hf_config,
           "a Hugging Face config.json: judge on that model's vectors (posenc generate --hf-config), generated into a "
           "temporary folder that is removed afterwards");
}

// The command line that reruns this check: what the reports print next to a failure.
std::string replay_command(const std::string& head, const ConformOptions& o, bool properties) {
  std::string command = head + " --profile " + shell_quote(o.profile);
  if (o.hf_config) command += " --hf-config " + shell_quote(*o.hf_config);
  if (o.bound) command += " --bound " + shell_quote(*o.bound);
  if (o.vectors != default_vectors_dir()) command += " --vectors " + shell_quote(o.vectors);
  if (o.own_vectors) command += " --own-vectors";
  for (const auto& f : o.filter) command += " --filter " + shell_quote(f);
  for (const auto& f : o.exclude) command += " --exclude " + shell_quote(f);
  if (o.formats) command += " --formats " + shell_quote(*o.formats);
  if (o.working_format) command += " --working-format " + shell_quote(*o.working_format);
  if (o.max_position) command += " --max-position " + shell_quote(*o.max_position);
  if (o.checks) command += " --checks " + shell_quote(*o.checks);
  if (properties) command += " --seed " + shell_quote(o.seed) + " --property-cases " + shell_quote(o.property_cases);
  if (properties && o.property_formats) command += " --property-formats " + shell_quote(*o.property_formats);
  return command;
}

// The parts --checks selects (all it can run when not given): a name outside them, or properties
// where there is no code to call (verify), is refused.
std::vector<conformance::Part> selected_parts(const ConformOptions& o, bool properties) {
  std::vector<conformance::Part> parts;
  if (!o.checks) {
    for (auto p : conformance::kAllParts) {
      if (p != conformance::Part::properties || properties) parts.push_back(p);
    }
    return parts;
  }
  const std::string allowed = properties ? "a list of accuracy, validation, properties"
                                         : "a list of accuracy, validation (a results file has no code for properties)";
  for (auto name : split_list(*o.checks)) {
    conformance::Part p{};
    try {
      p = conformance::parse_part(name, "--checks");
    } catch (const InvalidParameter&) {
      throw InvalidParameter("--checks", "'" + *o.checks + "'", allowed);  // the whole value, as typed
    }
    if (p == conformance::Part::properties && !properties) throw InvalidParameter("--checks", "'" + *o.checks + "'", allowed);
    if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
  }
  if (parts.empty()) throw InvalidParameter("--checks", "'" + *o.checks + "'", allowed);
  return parts;
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
  conformance::RunOptions options;
  options.vectors = o.vectors;
  if (!o.own_vectors) options.manifest_sha256 = shipped_manifest_sha256();
  options.filter = o.filter;
  options.exclude = o.exclude;
  options.files_asked = !o.filter.empty();
  const auto parts = selected_parts(o, properties);
  auto selected = [&](conformance::Part p) { return std::find(parts.begin(), parts.end(), p) != parts.end(); };
  options.accuracy = selected(conformance::Part::accuracy);
  options.validation = selected(conformance::Part::validation);
  options.tolerance.profile = conformance::parse_profile(o.profile);
  if (o.bound) {
    double b = parse_double("--bound", *o.bound);
    if (!(b >= 0)) throw InvalidParameter("--bound", *o.bound, "a finite value >= 0");
    options.tolerance.scaled_bound = b;
  }
  if (o.formats) {
    options.formats.clear();
    for (auto part : split_list(*o.formats)) options.formats.push_back(parse_format(part));
    options.formats_asked = true;
  }
  if (o.working_format) options.tolerance.working = parse_working_formats(*o.working_format);
  if (o.max_position) {
    const std::int64_t n = parse_int64("--max-position", *o.max_position);
    if (n < 0) throw InvalidParameter("--max-position", *o.max_position, "an integer >= 0");
    options.max_position = static_cast<double>(n);
  }
  const std::int64_t max_failures = parse_int64("--max-failures", o.max_failures);
  if (max_failures < 0) throw InvalidParameter("--max-failures", o.max_failures, "an integer >= 0");
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

// With --hf-config, the model's vectors are generated into a temporary folder (removed when the
// run ends, also on an error) and judged as the user's own; --vectors and --own-vectors would
// name other vectors, so they are refused with it.
void judge_vectors(const ConformOptions& o, const std::function<std::unique_ptr<conformance::Implementation>()>& make,
                   const std::string& replay, int& status, bool properties) {
  if (!o.hf_config) return judge(o, make, replay, status, properties);
  const std::string with = "absent with --hf-config " + *o.hf_config + " (the vectors are generated from the config)";
  if (o.vectors != default_vectors_dir()) throw InvalidParameter("--vectors", "'" + o.vectors + "'", with);
  if (o.own_vectors) throw InvalidParameter("--own-vectors", "(given)", with);
  TemporaryFolder folder;
  generator::write_vectors(hf_config_vectors(*o.hf_config), folder.path());
  ConformOptions generated = o;
  generated.vectors = folder.path().string();
  generated.own_vectors = true;
  judge(generated, make, replay, status, properties);
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
