// `posenc compare`'s table: several runs side by side, per vector file.
#include "posenc/reports/compare.hpp"

#include <algorithm>
#include <iomanip>

#include "verdict_text.hpp"

namespace posenc::conformance {

// Worst margin (error / bound) per vector file, one column per report.
void print_comparison(std::ostream& out, const std::vector<RunReport>& reports) {
  out << std::left << std::setw(28) << "vectors";
  for (const auto& r : reports) out << " " << std::setw(26) << r.implementation.substr(0, 26);
  out << "\n" << std::setw(28) << "verdict";
  for (const auto& r : reports) out << " " << std::setw(26) << (r.conformant() ? "CONFORMANT" : "NOT CONFORMANT");
  out << "\n";
  std::vector<std::string> files;
  for (const auto& r : reports) {
    for (const auto& f : r.files) {
      if (std::find(files.begin(), files.end(), f.path) == files.end()) files.push_back(f.path);
    }
  }
  for (const auto& path : files) {
    out << std::setw(28) << path;
    for (const auto& r : reports) {
      std::string cell = "-";
      for (const auto& f : r.files) {
        if (f.path != path) continue;
        if (f.passed + f.failed == 0) {
          cell = "unsupported";
        } else {
          cell = short_number(f.worst_margin.value) + (f.failed ? " (" + std::to_string(f.failed) + " failed)" : "");
        }
      }
      out << " " << std::setw(26) << cell;
    }
    out << "\n";
  }
  out << "(worst margin, error / bound (> 1 fails), per vector file; - not in that report)\n";
}

}  // namespace posenc::conformance
