// The run's text summary (what `posenc conform` and `posenc verify` print).
#include "posenc/reports/text.hpp"

#include <iomanip>
#include <map>
#include <optional>
#include <set>

#include "verdict_text.hpp"

namespace posenc::conformance {
namespace {

// Below a file's row: per format its worst margin and, where the cases have positions, how far
// the implementation is accurate.
void print_formats(std::ostream& out, const RunReport& report, const FileResult& f) {
  std::string line;
  for (const auto& [format, m] : f.margin_by_format) {
    line += (line.empty() ? "    " : "; ") + std::string(to_string(format)) + " margin " + short_number(m.value);
    const auto context = f.accurate_context.find(format);
    if (context != f.accurate_context.end()) line += ", " + accurate_text(report, context->second);
  }
  if (!line.empty()) out << line << "\n";
}

// The file's first max_failures failures under a line per test group naming how many of the
// group's checks failed, then how many more are not shown.
void print_failures(std::ostream& out, const FileResult& f, std::size_t max_failures) {
  std::map<std::int64_t, std::size_t> per_group;
  for (const auto& failure : f.failures) ++per_group[failure.group];
  std::optional<std::int64_t> group;
  std::size_t shown = 0;
  for (const auto& failure : f.failures) {
    if (shown == max_failures) break;
    if (failure.group != group) {
      group = failure.group;
      out << "    group " << failure.group << " (" << failure.group_comment << "): " << per_group[failure.group]
          << " failed\n";
    }
    out << "      FAIL " << failure_text(failure) << "\n";
    ++shown;
  }
  if (shown < f.failures.size()) {
    std::set<std::int64_t> groups_left;
    for (std::size_t i = shown; i < f.failures.size(); ++i) groups_left.insert(f.failures[i].group);
    out << "    and " << f.failures.size() - shown << " more failures in " << groups_left.size()
        << (groups_left.size() == 1 ? " group" : " groups")
        << " (--max-failures N shows more; the JSON report has every one)\n";
  }
}

}  // namespace

void print_summary(std::ostream& out, const RunReport& report, std::size_t max_failures) {
  out << "implementation: " << report.implementation << "\n";
  out << "profile: " << profile_name(report);
  if (!report.tolerance.scaled_bound && report.tolerance.profile == Profile::standard) {
    // standard's angle allowance is counted in these formats' u (SPEC.md section 5).
    out << "; angles formed in";
    for (Format f : kAllFormats) {
      out << (f == kAllFormats[0] ? " " : ", ") << to_string(report.tolerance.working_format(f)) << " for "
          << to_string(f);
    }
  }
  // Attention's declared roundings widen strict's and standard's bounds (SPEC.md section 5).
  if (!report.tolerance.scaled_bound && report.tolerance.profile != Profile::exact) {
    if (const std::string rounding = rounding_text(report); !rounding.empty()) out << "; " << rounding;
  }
  out << "\n\n";
  out << std::left << std::setw(30) << "vectors" << std::right << std::setw(8) << "margin" << std::setw(8) << "passed"
      << std::setw(8) << "failed" << std::setw(12) << "not judged" << std::setw(14) << "worst scaled" << std::setw(11)
      << "worst ulp" << "  worst margin at\n";
  for (const auto& f : report.files) {
    out << std::left << std::setw(30) << f.path << std::right << std::setw(8) << short_number(f.worst_margin.value)
        << std::setw(8) << f.passed() << std::setw(8) << f.failed() << std::setw(12) << f.not_judged() << std::setw(14)
        << short_number(f.worst_scaled.value) << std::setw(11) << short_number(f.worst_ulp.value);
    const std::string where = margin_where(f.worst_margin);
    if (!where.empty()) out << "  " << where;
    out << "\n";
    print_formats(out, report, f);
    print_failures(out, f, max_failures);
  }
  if (!report.properties.empty()) out << "\nproperties\n";
  for (const auto& p : report.properties) {
    out << "  " << std::left << std::setw(12) << p.status << std::right << std::setw(5) << p.cases << " cases  "
        << std::left << std::setw(5) << to_string(p.format) << std::right << p.name << "\n";
    if (!p.counterexample.empty()) out << "      counterexample: " << p.counterexample << "\n";
  }
  out << "\n(margin: error / bound, > 1 fails; counts are checks, one case in one format (case x format))\n";
  if (const std::string context = overall_accurate_text(report); !context.empty()) {
    out << "accurate context (every file): " << context << "\n";
  }
  for (Part p : kAllParts) out << part_line(report, p) << "\n";
  out << verdict_line(report) << "\n";
}

}  // namespace posenc::conformance
