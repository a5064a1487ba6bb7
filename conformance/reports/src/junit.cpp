// JUnit XML of a run: one test suite per vector file, for CI dashboards.
#include "posenc/reports/junit.hpp"

#include <sstream>

#include "markup_escape.hpp"

namespace posenc::conformance {

std::string junit_xml(const RunReport& report) {
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << "<testsuites name=\"posenc conform\" tests=\"" << report.passed() + report.failed() + report.unsupported()
    << "\" failures=\"" << report.failed() << "\" skipped=\"" << report.unsupported() << "\">\n";
  for (const auto& f : report.files) {
    x << "  <testsuite name=\"" << markup_escape(f.path) << "\" tests=\"" << f.passed + f.failed + f.unsupported
      << "\" failures=\"" << f.failed << "\" skipped=\"" << f.unsupported << "\">\n";
    x << "    <testcase classname=\"" << markup_escape(report.implementation) << "\" name=\"" << markup_escape(f.path)
      << "\">\n";
    for (const auto& why : f.failures) x << "      <failure message=\"" << markup_escape(why) << "\"/>\n";
    if (f.failed == 0 && f.unsupported > 0 && f.passed == 0) x << "      <skipped/>\n";
    x << "    </testcase>\n  </testsuite>\n";
  }
  x << "</testsuites>\n";
  return x.str();
}

}  // namespace posenc::conformance
