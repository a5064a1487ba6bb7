// The run's text summary (what `posenc conform` and `posenc verify` print).
#include "posenc/reports/text.hpp"

#include <cstdio>
#include <iomanip>

namespace posenc::conformance {

void print_summary(std::ostream& out, const RunReport& report) {
  out << "implementation: " << report.implementation << "\n";
  out << "profile: "
      << (report.tolerance.scaled_bound ? "explicit bound " + std::to_string(*report.tolerance.scaled_bound)
                                        : std::string(to_string(report.tolerance.profile)))
      << "\n\n";
  out << std::left << std::setw(30) << "vectors" << std::right << std::setw(8) << "passed" << std::setw(8) << "failed"
      << std::setw(13) << "unsupported" << std::setw(14) << "worst scaled" << std::setw(13) << "worst ulp"
      << "  worst case\n";
  for (const auto& f : report.files) {
    char scaled[32], ulp[32];
    std::snprintf(scaled, sizeof scaled, "%.3g", f.worst_scaled.value);
    std::snprintf(ulp, sizeof ulp, "%.3g", f.worst_ulp.value);
    out << std::left << std::setw(30) << f.path << std::right << std::setw(8) << f.passed << std::setw(8) << f.failed
        << std::setw(13) << f.unsupported << std::setw(14) << scaled << std::setw(13) << ulp;
    if (f.worst_scaled.tc_id != 0) out << "  tcId " << f.worst_scaled.tc_id << " " << f.worst_scaled.where;
    out << "\n";
    for (const auto& why : f.failures) out << "    FAIL " << why << "\n";
  }
  if (!report.properties.empty()) out << "\nproperties\n";
  for (const auto& p : report.properties) {
    out << "  " << std::left << std::setw(12) << p.status << std::right << std::setw(5) << p.cases << " cases  " << p.name
        << "\n";
    if (!p.counterexample.empty()) out << "      counterexample: " << p.counterexample << "\n";
  }
  out << "\n" << report.passed() << " passed, " << report.failed() << " failed, " << report.unsupported()
      << " unsupported\n";
  out << (report.conformant() ? "CONFORMANT" : "NOT CONFORMANT") << "\n";
}

}  // namespace posenc::conformance
