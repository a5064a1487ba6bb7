#include "posenc/judge/runner.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "file_selection.hpp"
#include "vacuity.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/vector_json.hpp"


namespace posenc::conformance {
namespace {

// Whether text holds n as a whole number (not as part of a longer one).
bool names_number(const std::string& text, std::int64_t n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  for (auto at = text.find(digits); at != std::string::npos; at = text.find(digits, at + 1)) {
    const bool before = at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]));
    const std::size_t end = at + digits.size();
    const bool after = end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]));
    if (!before && !after) return true;
  }
  return false;
}

// The case's inputs, then its comment unless the comment only repeats the positions (most say
// "position 2047, random x"), so a failure never reads "position=2047 (position 2047)".
std::string describe_inputs(const VectorCase& c) {
  std::ostringstream s;
  auto list = [&](const char* name, const std::vector<std::int64_t>& v) {
    if (v.empty()) return;
    s << " " << name << "=";
    for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  };
  list("position", c.position);
  list("position_b", c.position_b);
  if (!c.x.empty()) s << " x[" << c.x.size() << "]";
  bool repeats = !c.position.empty();
  for (const auto* v : {&c.position, &c.position_b}) {
    for (auto p : *v) repeats = repeats && names_number(c.comment, p);
  }
  if (!repeats && !c.comment.empty()) s << " (" << c.comment << ")";
  return s.str();
}

void record_worst(Worst& w, double value, const VectorCase& c, Format f, std::size_t element) {
  if (value > w.value || (w.tc_id == 0 && value >= w.value)) {
    w.value = value;
    w.tc_id = c.tc_id;
    w.where = std::string(to_string(f)) + " element " + std::to_string(element) + describe_inputs(c);
  }
}

// The case's distance from position 0, or nothing for cases without a position.
std::optional<double> case_position(const VectorCase& c) {
  if (c.position.empty()) return std::nullopt;
  double p = 0;
  for (auto v : c.position) p = std::max(p, std::fabs(static_cast<double>(v)));
  for (auto v : c.position_b) p = std::max(p, std::fabs(static_cast<double>(v)));
  return p;
}

using PositionErrors = std::map<std::pair<double, Format>, PositionError>;

void record_position(PositionErrors& by_position, double position, Format f, const ElementError& error) {
  auto [it, added] =
      by_position.try_emplace({position, f}, PositionError{position, f, error.scaled, error.bound, error.margin});
  if (added) return;
  PositionError& e = it->second;
  const double bound = error.bound;
  e.worst_scaled = std::max(e.worst_scaled, error.scaled);
  e.worst_margin = std::max(e.worst_margin, error.margin);
  if (bound > 0 && (e.bound == 0 || bound < e.bound)) e.bound = bound;
}

// What a file's checks add up to beyond FileResult's counts.
struct FileTally {
  FileResult& r;
  PositionErrors by_position;
  // Per format and |position|: whether every judged valid case there passed.
  std::map<Format, std::map<double, bool>> passed_at;

  void record_margin(const Margin& m) {
    auto keep = [&](Margin& w) {
      if (m.value > w.value || w.tc_id == 0) w = m;
    };
    keep(r.worst_margin);
    keep(r.margin_by_format[m.format]);
  }

  // A valid case's verdict in format f, for the accurate context.
  void record_verdict(const std::optional<double>& position, Format f, bool pass) {
    if (!position) return;
    auto [it, added] = passed_at[f].try_emplace(*position, pass);
    if (!added) it->second = it->second && pass;
  }

  void finish() {
    for (const auto& [key, e] : by_position) r.by_position.push_back(e);
    for (const auto& [f, at] : passed_at) {
      std::optional<double> up_to;
      for (const auto& [position, pass] : at) {
        if (!pass) break;
        up_to = position;
      }
      r.accurate_up_to[f] = up_to;
    }
  }
};

// specs: element_specs(g, c) for a valid case, computed once for all formats.
void check_outcome(const Outcome& o, const VectorGroup& g, std::int64_t group, const VectorCase& c,
                   const std::vector<ElementSpec>& specs, Format f, const Tolerance& t, FileTally& tally) {
  FileResult& r = tally.r;
  PartCounts& part = c.valid ? r.accuracy : r.validation;
  const auto position = case_position(c);
  auto fail = [&](const std::string& why) {
    ++part.judged[f].failed;
    r.failures.push_back({group, g.comment, c.tc_id, f, why});
  };
  // A valid case that failed with nothing to measure.
  auto fail_unmeasured = [&](const std::string& why) {
    tally.record_margin({std::numeric_limits<double>::infinity(), c.tc_id, std::nullopt, f, position});
    tally.record_verdict(position, f, false);
    fail(why);
  };
  if (o.status == Status::unsupported) {
    ++part.not_judged[o.why_unsupported][f];
    return;
  }
  if (!c.valid) {
    if (o.status == Status::failed) return fail(o.message);
    if (o.status == Status::invalid) {
      ++part.judged[f].passed;
    } else {
      fail("accepted invalid parameters (expected an error on " + c.error + ")");
    }
    return;
  }
  if (o.status == Status::failed) return fail_unmeasured(o.message);
  if (o.status == Status::invalid) return fail_unmeasured("refused valid parameters: " + o.message);
  if (o.values.size() != c.expected.size()) {
    return fail_unmeasured("returned " + std::to_string(o.values.size()) + " values, expected " +
                           std::to_string(c.expected.size()));
  }
  Tolerance tolerance = t;
  if (o.derived && tolerance.profile == Profile::exact) tolerance.profile = Profile::strict;
  const std::vector<double> largest = largest_errors(g, c, specs);
  bool ok = true, vacuous = false;
  std::string first_bad;
  for (std::size_t j = 0; j < specs.size(); ++j) {
    const std::uint64_t expected = c.expected.of(f)[j];
    const ElementError e = check_element(specs[j], expected, o.values[j], f, tolerance);
    // A pass under a bound that admits any value the element can take says nothing: the
    // element is not judged and stays out of the worst errors (a failure beyond it is real).
    if (e.pass && std::isfinite(to_double(f, expected)) && bound_vacuous(specs[j], largest[j], e.bound, f)) {
      vacuous = true;
      continue;
    }
    record_worst(r.worst_scaled, e.scaled, c, f, j);
    record_worst(r.worst_ulp, e.ulp, c, f, j);
    tally.record_margin({e.margin, c.tc_id, static_cast<std::int64_t>(j), f, position});
    if (position) record_position(tally.by_position, *position, f, e);
    if (!e.pass && ok) {
      ok = false;
      std::ostringstream s;
      s << "element " << j << " = " << std::hexfloat << o.values[j] << ", expected " << to_double(f, expected)
        << std::defaultfloat << " (margin " << e.margin << ": scaled error " << e.scaled << ", bound " << e.bound
        << ", " << e.ulp << " ulp)" << describe_inputs(c);
      first_bad = s.str();
    }
  }
  // A case not judged for a vacuous bound also ends the accurate context: past it the profile
  // vouches for nothing.
  tally.record_verdict(position, f, ok && !vacuous);
  if (!ok) {
    fail(first_bad);
  } else if (vacuous) {
    ++part.not_judged[NotJudged::bound_vacuous][f];
  } else {
    ++part.judged[f].passed;
  }
}

}  // namespace

Tolerance with_declared_working_formats(const Tolerance& t, const Implementation& impl) {
  Tolerance out = t;
  for (Format f : kAllFormats) {
    if (out.working.count(f)) continue;  // the user's --working-format wins
    if (const auto w = impl.working_format(f)) out.working[f] = *w;
  }
  return out;
}

RunReport run_vectors(Implementation& impl, const RunOptions& options,
                      const std::function<void(std::size_t, std::size_t)>& progress) {
  RunReport report;
  report.implementation = impl.name();
  report.tolerance = with_declared_working_formats(options.tolerance, impl);
  report.checks.clear();
  if (options.accuracy) report.checks.push_back(Part::accuracy);
  if (options.validation) report.checks.push_back(Part::validation);
  if (options.formats_asked) report.asked_formats = options.formats;
  report.files_asked = options.files_asked;
  const auto manifest = read_checked_manifest(options.vectors, options.manifest_sha256);
  {
    std::vector<std::string> paths;
    for (const auto& m : manifest) paths.push_back(m.path);
    impl.check_cases(paths, [&](const std::string& path) {
      for (const auto& m : manifest) {
        if (m.path == path) return load_listed_file(options.vectors, m);
      }
      throw VectorFileError(path + ": not listed in the MANIFEST");
    });
  }
  const std::vector<ManifestEntry> selected = select_files(manifest, options.filter, options.exclude);
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const auto& m = selected[i];
    const VectorFile file = load_listed_file(options.vectors, m);
    FileResult r;
    FileTally tally{r, {}, {}};
    r.path = m.path;
    impl.begin_file(m.path);
    for (std::size_t gi = 0; gi < file.groups.size(); ++gi) {
      const VectorGroup& g = file.groups[gi];
      for (const auto& c : g.tests) {
        // A case is put in format F only when its inputs are F values: an implementation that
        // stores F could not even receive the others. Every adapter sees the same checks.
        std::vector<Format> formats;
        const auto position = case_position(c);
        const bool beyond = c.valid && options.max_position && position && *position > *options.max_position;
        if (!(c.valid ? options.accuracy : options.validation)) continue;
        PartCounts& part = c.valid ? r.accuracy : r.validation;
        for (Format f : options.formats) {
          if (!inputs_exact_in(g, c, f)) {
            ++part.not_judged[NotJudged::not_representable][f];
          } else if (beyond) {
            ++part.not_judged[NotJudged::beyond_max_position][f];
          } else {
            formats.push_back(f);
          }
        }
        if (formats.empty()) continue;
        const auto outcomes = impl.run(g, c, formats);
        const auto specs = c.valid ? element_specs(g, c) : std::vector<ElementSpec>{};
        for (std::size_t k = 0; k < formats.size(); ++k) {
          check_outcome(outcomes.at(k), g, static_cast<std::int64_t>(gi), c, specs, formats[k], report.tolerance, tally);
        }
      }
    }
    tally.finish();
    report.files.push_back(std::move(r));
    if (progress) progress(i + 1, selected.size());
  }
  return report;
}

}  // namespace posenc::conformance
