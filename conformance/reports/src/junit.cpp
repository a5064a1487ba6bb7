// JUnit XML of a run: one test suite per vector file, for CI dashboards.
#include "posenc/reports/junit.hpp"

#include <sstream>

#include "markup_escape.hpp"
#include "verdict_text.hpp"

namespace posenc::conformance {

std::string junit_xml(const RunReport& report) {
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << "<testsuites name=\"posenc conform\" tests=\"" << report.passed() + report.failed() + report.not_judged()
    << "\" failures=\"" << report.failed() << "\" skipped=\"" << report.not_judged() << "\">\n";
  for (const auto& f : report.files) {
    x << "  <testsuite name=\"" << markup_escape(f.path) << "\" tests=\"" << f.passed() + f.failed() + f.not_judged()
      << "\" failures=\"" << f.failed() << "\" skipped=\"" << f.not_judged() << "\">\n";
    // The margin (error / bound, > 1 fails) and accurate context of SPEC.md section 9.
    x << "    <properties>\n";
    auto property = [&](const std::string& name, const std::string& value) {
      x << "      <property name=\"" << markup_escape(name) << "\" value=\"" << markup_escape(value) << "\"/>\n";
    };
    if (f.worst_margin.tc_id != 0) {
      property("worstMargin", short_number(f.worst_margin.value));
      property("worstMarginAt", margin_where(f.worst_margin));
    }
    for (const auto& [format, m] : f.margin_by_format) {
      property("worstMargin." + std::string(to_string(format)), short_number(m.value));
    }
    for (const auto& [format, c] : f.accurate_context) {
      property("accurateUpTo." + std::string(to_string(format)), c.up_to ? position_text(*c.up_to) : "none");
      property("accurateContext." + std::string(to_string(format)), accurate_text(report, c));
    }
    x << "    </properties>\n";
    x << "    <testcase classname=\"" << markup_escape(report.implementation) << "\" name=\"" << markup_escape(f.path)
      << "\">\n";
    for (const auto& why : f.failures) x << "      <failure message=\"" << markup_escape(failure_text(why)) << "\"/>\n";
    if (f.failed() == 0 && f.not_judged() > 0 && f.passed() == 0) x << "      <skipped/>\n";
    x << "    </testcase>\n  </testsuite>\n";
  }
  x << "</testsuites>\n";
  return x.str();
}

}  // namespace posenc::conformance
