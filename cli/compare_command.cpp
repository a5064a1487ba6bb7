// `posenc compare A.json B.json ... [--html FILE]`: several implementations' JSON reports
// (posenc conform/verify --report) side by side, and on the same plot axes.
#include <iostream>

#include "commands.hpp"
#include "posenc/reports/compare.hpp"
#include "posenc/reports/html.hpp"
#include "posenc/reports/json.hpp"
#include "posenc/vectors/manifest.hpp"
#include "text_io.hpp"

namespace posenc::cli {

void add_compare_command(Command& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto html = std::make_shared<std::string>();
  Command c = app.add_command("compare", "compare JSON reports of several implementations (conform --report)");
  c.option("reports", *files, "JSON reports written by posenc conform/verify --report").required();
  c.option("--html", *html, "write a self-contained HTML page with every report on the same plots");
  c.on_run([files, html] {
    std::vector<conformance::RunReport> reports;
    for (const auto& path : *files) reports.push_back(conformance::parse_report_json(conformance::read_bytes(path), path));
    conformance::print_comparison(std::cout, reports);
    if (!html->empty()) write_text(*html, conformance::html_report(reports));
  });
}

}  // namespace posenc::cli
