#include "judging_options.hpp"

#include <algorithm>
#include <map>

#include "numbers.hpp"
#include "text_io.hpp"

namespace posenc::cli {
namespace {

// A per-storage-format option: one value V (every storage format's), or S=V pairs, comma
// separated (storage S's); each storage format at most once. `allowed` are the values' names,
// `none_allowed` adds "none" (read as an empty value); `what` says what a value is, `example` is a
// pair the error shows.
template <class Value>
std::map<Format, Value> parse_per_storage(const std::string& option, const std::string& text,
                                          const std::vector<Format>& allowed, bool none_allowed, const std::string& what,
                                          const std::string& example) {
  std::string names;
  for (Format f : allowed) names += (names.empty() ? "" : ", ") + std::string(to_string(f));
  if (none_allowed) names += ", none";
  auto value = [&](std::string_view s) -> Value {
    if (none_allowed && s == "none") return Value{};
    for (Format f : allowed) {
      if (to_string(f) == s) return Value{f};
    }
    throw InvalidParameter(option, "'" + std::string(s) + "' in '" + text + "'",
                           what + ", one of " + names + " (or STORAGE=VALUE pairs such as " + example + ")");
  };
  auto storage_format = [&](std::string_view s) {
    for (Format f : kAllFormats) {
      if (to_string(f) == s) return f;
    }
    throw InvalidParameter(option, "'" + std::string(s) + "' in '" + text + "'",
                           "a storage format, one of f64, f32, bf16, f16");
  };
  std::map<Format, Value> out;
  if (text.find('=') == std::string::npos) {
    const Value v = value(text);
    for (Format f : kAllFormats) out[f] = v;
    return out;
  }
  for (auto part : split_list(text)) {
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) {
      throw InvalidParameter(option, "'" + text + "'",
                             "one value, or only STORAGE=VALUE pairs ('" + std::string(part) + "' is neither)");
    }
    const Format storage = storage_format(part.substr(0, eq));
    if (!out.emplace(storage, value(part.substr(eq + 1))).second) {
      throw InvalidParameter(option, "'" + text + "'",
                             "each storage format at most once (" + std::string(to_string(storage)) + " is repeated)");
    }
  }
  return out;
}

// --working-format: the format angles and frequencies are formed in, f32 or f64.
std::map<Format, Format> parse_working_formats(const std::string& text) {
  return parse_per_storage<Format>("--working-format", text, {Format::f64, Format::f32}, false, "a working format",
                                   "bf16=f32");
}

// --score-format, --probability-format: attention's roundings, any format or none.
std::map<Format, std::optional<Format>> parse_rounding_formats(const std::string& option, const std::string& text) {
  return parse_per_storage<std::optional<Format>>(option, text, {kAllFormats[0], kAllFormats[1], kAllFormats[2], kAllFormats[3]},
                                                  true, "a format the values are rounded to", "bf16=bf16");
}

}  // namespace

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
  c.option("--score-format", o.score_format,
           "attention: the format the scores s = scale q.k + bias are rounded to (SPEC.md section 5): F (f64, f32, bf16, "
           "f16, or none: kept in the working format) for every storage format, or STORAGE=F pairs; default what the "
           "implementation declares, else none");
  c.option("--probability-format", o.probability_format,
           "attention: the format the softmax's probabilities P are rounded to before P V, as --score-format");
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
  c.option("--name", o.hf_name,
           "with --hf-config: the model's name, its vectors' file rope/NAME.json (default: the config's _name_or_path, "
           "its last part, else its model_type, else the file's name)");
}

// The command line that reruns this check: what the reports print next to a failure.
std::string replay_command(const std::string& head, const ConformOptions& o, bool properties) {
  std::string command = head + " --profile " + shell_quote(o.profile);
  if (o.hf_config) command += " --hf-config " + shell_quote(*o.hf_config);
  if (o.hf_name) command += " --name " + shell_quote(*o.hf_name);
  if (o.bound) command += " --bound " + shell_quote(*o.bound);
  if (o.vectors != default_vectors_dir()) command += " --vectors " + shell_quote(o.vectors);
  if (o.own_vectors) command += " --own-vectors";
  for (const auto& f : o.filter) command += " --filter " + shell_quote(f);
  for (const auto& f : o.exclude) command += " --exclude " + shell_quote(f);
  if (o.formats) command += " --formats " + shell_quote(*o.formats);
  if (o.working_format) command += " --working-format " + shell_quote(*o.working_format);
  if (o.score_format) command += " --score-format " + shell_quote(*o.score_format);
  if (o.probability_format) command += " --probability-format " + shell_quote(*o.probability_format);
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

conformance::RunOptions run_options(const ConformOptions& o, bool properties) {
  if (o.hf_name && !o.hf_config) {
    throw InvalidParameter("--name", "'" + *o.hf_name + "'", "absent without --hf-config (it names a config's vectors)");
  }
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
  if (o.score_format) options.tolerance.score = parse_rounding_formats("--score-format", *o.score_format);
  if (o.probability_format) {
    options.tolerance.probability = parse_rounding_formats("--probability-format", *o.probability_format);
  }
  if (o.max_position) {
    const std::int64_t n = parse_int64("--max-position", *o.max_position);
    if (n < 0) throw InvalidParameter("--max-position", *o.max_position, "an integer >= 0");
    options.max_position = static_cast<double>(n);
  }
  return options;
}

std::int64_t parse_max_failures(const ConformOptions& o) {
  const std::int64_t max_failures = parse_int64("--max-failures", o.max_failures);
  if (max_failures < 0) throw InvalidParameter("--max-failures", o.max_failures, "an integer >= 0");
  return max_failures;
}

}  // namespace posenc::cli
