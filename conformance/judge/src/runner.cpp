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

#include "posenc/judge/case_judgement.hpp"
#include "posenc/judge/file_selection.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/vector_json.hpp"


namespace posenc::conformance {
namespace {

void record_worst(Worst& w, double value, const VectorGroup& g, const VectorCase& c, Format f, std::size_t element) {
  if (value > w.value || (w.tc_id == 0 && value >= w.value)) {
    w.value = value;
    w.tc_id = c.tc_id;
    w.where = std::string(to_string(f)) + " " + element_name(g, c, element) + describe_inputs(c);
  }
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

using ChecksByPosition = std::map<Format, std::map<double, ChecksAtPosition>>;

// What a file's checks add up to beyond FileResult's counts.
struct FileTally {
  FileResult& r;
  PositionErrors by_position;
  // Per format and |position|: the valid checks there, for the accurate context.
  ChecksByPosition checks_at;

  void record_margin(const Margin& m) {
    auto keep = [&](Margin& w) {
      if (m.value > w.value || w.tc_id == 0) w = m;
    };
    keep(r.worst_margin);
    keep(r.margin_by_format[m.format]);
  }

  // A valid check in format f, for the accurate context.
  enum class Verdict { passed, failed, bound_vacuous };
  void record_verdict(const std::optional<double>& position, Format f, Verdict v) {
    if (!position) return;
    ChecksAtPosition& n = checks_at[f][*position];
    n.judged += v != Verdict::bound_vacuous;
    n.failed += v == Verdict::failed;
    n.bound_vacuous += v == Verdict::bound_vacuous;
  }

  // The file's points and contexts; its checks per position join the run's.
  void finish(ChecksByPosition& run_checks_at) {
    for (const auto& [key, e] : by_position) r.by_position.push_back(e);
    for (const auto& [f, at] : checks_at) {
      if (const auto context = accurate_context(at)) r.accurate_context[f] = *context;
      for (const auto& [position, n] : at) {
        ChecksAtPosition& all = run_checks_at[f][position];
        all.judged += n.judged;
        all.failed += n.failed;
        all.bound_vacuous += n.bound_vacuous;
      }
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
    tally.record_verdict(position, f, FileTally::Verdict::failed);
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
  // An attention case answered with O alone is judged on O (its L not judged, and counted).
  const bool without_lse = answers_without_lse(g, c, o.values.size());
  if (o.values.size() != c.expected.size() && !without_lse) {
    return fail_unmeasured("returned " + std::to_string(o.values.size()) + " values, expected " +
                           std::to_string(c.expected.size()));
  }
  const CaseJudgement judged = judge_values(g, c, specs, o.values, f, t, o.derived);
  const bool ok = judged.pass, vacuous = judged.any_vacuous;
  if (ok && vacuous) {
    // Not judged: bound vacuous. Such a check contributes no judged point: none of its elements
    // enters the worst errors, the margins or errorByPosition (SPEC.md section 9), so a report
    // never draws a check it did not judge as a pass. Nor does it end the accurate context,
    // which counts it.
    tally.record_verdict(position, f, FileTally::Verdict::bound_vacuous);
    ++part.not_judged[NotJudged::bound_vacuous][f];
    return;
  }
  // A judged check: every element but those of a vacuous bound (a failure beyond such an
  // element is real, and the element itself says nothing).
  for (std::size_t j = 0; j < judged.elements.size(); ++j) {
    if (judged.vacuous[j]) continue;
    const ElementError& e = judged.elements[j];
    record_worst(r.worst_scaled, e.scaled, g, c, f, j);
    record_worst(r.worst_ulp, e.ulp, g, c, f, j);
    tally.record_margin({e.margin, c.tc_id, static_cast<std::int64_t>(j), f, position});
    if (position) record_position(tally.by_position, *position, f, e);
  }
  tally.record_verdict(position, f, ok ? FileTally::Verdict::passed : FileTally::Verdict::failed);
  if (ok) {
    ++part.judged[f].passed;
  } else {
    fail(judged.message);
  }
  if (without_lse) ++part.judged[f].without_lse;
}

}  // namespace

std::optional<AccurateContext> accurate_context(const std::map<double, ChecksAtPosition>& at) {
  AccurateContext c;
  bool judged = false;
  for (const auto& [position, n] : at) {
    judged = judged || n.judged > 0;
    if (n.failed > 0) {
      c.fails_at = position;
      break;
    }
    if (n.judged > 0) c.up_to = position;
  }
  if (!judged) return std::nullopt;
  if (c.up_to) {
    for (const auto& [position, n] : at) {
      if (position > *c.up_to) break;
      c.bound_vacuous += n.bound_vacuous;
    }
  }
  return c;
}

Tolerance with_declared_working_formats(const Tolerance& t, const Implementation& impl) {
  Tolerance out = t;
  for (Format f : kAllFormats) {
    // The user's --working-format (for attention too), --score-format and --probability-format win.
    if (!out.working.count(f)) {
      if (const auto w = impl.working_format(f)) out.working[f] = *w;
      if (const auto w = impl.attention_working_format(f)) out.attention_working[f] = *w;
    }
    if (!out.score.count(f)) out.score[f] = impl.score_format(f);
    if (!out.probability.count(f)) out.probability[f] = impl.probability_format(f);
  }
  return out;
}

std::optional<NotJudged> excluded_by_run(const RunOptions& options, const VectorGroup& g, const VectorCase& c, Format f) {
  if (!inputs_exact_in(g, c, f)) return NotJudged::not_representable;
  const auto position = case_position(c);
  if (c.valid && options.max_position && position && *position > *options.max_position) {
    return NotJudged::beyond_max_position;
  }
  return std::nullopt;
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
  ChecksByPosition run_checks_at;
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
        if (!(c.valid ? options.accuracy : options.validation)) continue;
        PartCounts& part = c.valid ? r.accuracy : r.validation;
        for (Format f : options.formats) {
          if (const auto why = excluded_by_run(options, g, c, f)) {
            ++part.not_judged[*why][f];
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
    tally.finish(run_checks_at);
    report.files.push_back(std::move(r));
    if (progress) progress(i + 1, selected.size());
  }
  for (const auto& [f, at] : run_checks_at) {
    if (const auto context = accurate_context(at)) report.accurate_context[f] = *context;
  }
  return report;
}

}  // namespace posenc::conformance
