// `posenc compare A.json B.json ... [--html FILE]`: several implementations' JSON reports
// (posenc conform/verify --report) side by side, and on the same plot axes.
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "posenc/conformance/html_report.hpp"
#include "posenc/conformance/manifest.hpp"
#include "text_io.hpp"

namespace posenc::cli {
namespace {

std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

// Worst scaled error per vector file, one column per report.
void print_table(std::ostream& out, const std::vector<conformance::RunReport>& reports) {
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
          cell = short_number(f.worst_scaled.value) + (f.failed ? " (" + std::to_string(f.failed) + " failed)" : "");
        }
      }
      out << " " << std::setw(26) << cell;
    }
    out << "\n";
  }
  out << "(worst scaled error per vector file; - not in that report)\n";
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto html = std::make_shared<std::string>();
  CLI::App* c = app.add_subcommand("compare", "compare JSON reports of several implementations (conform --report)");
  c->add_option("reports", *files, "JSON reports written by posenc conform/verify --report")->required();
  c->add_option("--html", *html, "write a self-contained HTML page with every report on the same plots");
  c->callback([files, html] {
    std::vector<conformance::RunReport> reports;
    for (const auto& path : *files) reports.push_back(conformance::parse_report_json(conformance::read_bytes(path), path));
    print_table(std::cout, reports);
    if (!html->empty()) write_text(*html, conformance::html_report(reports));
  });
}

}  // namespace posenc::cli
