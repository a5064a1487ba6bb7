// `posenc compare`'s table: several runs side by side, per vector file.
#include "posenc/reports/compare.hpp"

#include <algorithm>
#include <iomanip>

#include "verdict_text.hpp"

namespace posenc::conformance {
namespace {

std::string cell(const RunReport& r, const std::string& path) {
  for (const auto& f : r.files) {
    if (f.path != path) continue;
    if (f.passed() + f.failed() == 0) return "not judged";
    return short_number(f.worst_margin.value) + (f.failed() ? " (" + std::to_string(f.failed()) + " failed)" : "");
  }
  return "-";
}

}  // namespace

// Worst margin (error / bound) per vector file, one column per report, each headed by its
// implementation and profile and as wide as its widest cell: nothing is cut.
void print_comparison(std::ostream& out, const std::vector<RunReport>& reports) {
  std::vector<std::string> files;
  for (const auto& r : reports) {
    for (const auto& f : r.files) {
      if (std::find(files.begin(), files.end(), f.path) == files.end()) files.push_back(f.path);
    }
  }
  std::vector<std::vector<std::string>> rows;  // header, verdict, then one per file
  rows.push_back({"vectors"});
  rows.push_back({"verdict"});
  for (const auto& path : files) rows.push_back({path});
  for (const auto& r : reports) {
    rows[0].push_back(r.implementation + " (" + profile_name(r) + ")");
    rows[1].push_back(r.conformant() ? "CONFORMANT" : "NOT CONFORMANT");
    for (std::size_t i = 0; i < files.size(); ++i) rows[i + 2].push_back(cell(r, files[i]));
  }
  std::vector<std::size_t> width(reports.size() + 1, 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += (c ? "  " : "") + row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size(), ' ');
    }
    out << line << "\n";
  }
  out << "(worst margin, error / bound (> 1 fails), per vector file; - not in that report)\n";
}

}  // namespace posenc::conformance
