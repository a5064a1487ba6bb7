#include "posenc/reports/html.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "markup_escape.hpp"
#include "verdict_text.hpp"

namespace posenc::conformance {
namespace {

// Plots show margins down to this; smaller ones (exact results among them) sit on the floor,
// which the caption says.
constexpr double kMarginFloor = 1e-3;
constexpr std::size_t kFailuresShown = 20;  // per file in the table
constexpr int kWidth = 720, kHeight = 380;
constexpr int kLeft = 70, kRight = 20, kTop = 30, kBottom = 50;


std::string coordinate(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// Colours tell formats apart; dashes tell reports apart.
const char* format_colour(Format f) {
  switch (f) {
    case Format::f64: return "#1f5fa8";
    case Format::f32: return "#d9730d";
    case Format::bf16: return "#2b8a3e";
    case Format::f16: return "#8e44ad";
  }
  return "#000";
}
constexpr const char* kDashes[] = {"", "7 4", "2 3", "10 3 2 3"};

struct Point {
  double x, y;
};

struct Series {
  std::string label, colour, dash, css_class;
  std::vector<Point> points;
};

// Decade range [10^lo, 10^hi] covering the values, at least one decade wide.
std::pair<int, int> decades(double min, double max) {
  int lo = static_cast<int>(std::floor(std::log10(min)));
  int hi = static_cast<int>(std::ceil(std::log10(max)));
  if (hi <= lo) hi = lo + 1;
  return {lo, hi};
}

class LogPlot {
 public:
  LogPlot(std::pair<int, int> x, std::pair<int, int> y) : x_(x), y_(y) {}

  double px(double v) const { return kLeft + fraction(v, x_) * (kWidth - kLeft - kRight); }
  double py(double v) const { return kHeight - kBottom - fraction(v, y_) * (kHeight - kTop - kBottom); }

  std::string axes(const std::string& x_label, const std::string& y_label) const {
    std::ostringstream s;
    s << "<rect class=\"frame\" x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << kWidth - kLeft - kRight
      << "\" height=\"" << kHeight - kTop - kBottom << "\"/>\n";
    auto tick_step = [](std::pair<int, int> r) { return std::max(1, (r.second - r.first + 9) / 10); };
    for (int k = x_.first; k <= x_.second; k += tick_step(x_)) {
      const std::string x = coordinate(px(std::pow(10.0, k)));
      s << "<line class=\"grid\" x1=\"" << x << "\" x2=\"" << x << "\" y1=\"" << kTop << "\" y2=\"" << kHeight - kBottom
        << "\"/><text class=\"tick\" x=\"" << x << "\" y=\"" << kHeight - kBottom + 16 << "\" text-anchor=\"middle\">10"
        << "<tspan dy=\"-6\" font-size=\"9\">" << k << "</tspan></text>\n";
    }
    for (int k = y_.first; k <= y_.second; k += tick_step(y_)) {
      const std::string y = coordinate(py(std::pow(10.0, k)));
      s << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kWidth - kRight << "\" y1=\"" << y << "\" y2=\"" << y
        << "\"/><text class=\"tick\" x=\"" << kLeft - 6 << "\" y=\"" << y << "\" text-anchor=\"end\" dy=\"4\">10"
        << "<tspan dy=\"-6\" font-size=\"9\">" << k << "</tspan></text>\n";
    }
    s << "<text class=\"axis-label\" x=\"" << (kLeft + kWidth - kRight) / 2 << "\" y=\"" << kHeight - 10
      << "\" text-anchor=\"middle\">" << markup_escape(x_label) << "</text>\n";
    s << "<text class=\"axis-label\" transform=\"translate(16," << (kTop + kHeight - kBottom) / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << markup_escape(y_label) << "</text>\n";
    return s.str();
  }

  std::string series(const Series& ser) const {
    std::ostringstream s;
    s << "<g class=\"" << ser.css_class << "\" data-label=\"" << markup_escape(ser.label) << "\" stroke=\"" << ser.colour
      << "\" fill=\"" << ser.colour << "\">";
    s << "<polyline fill=\"none\"" << (ser.dash.empty() ? "" : " stroke-dasharray=\"" + ser.dash + "\"") << " points=\"";
    for (const auto& p : ser.points) s << coordinate(px(p.x)) << "," << coordinate(py(p.y)) << " ";
    s << "\"/>";
    if (ser.css_class == "series") {
      for (const auto& p : ser.points) {
        s << "<circle r=\"2.5\" cx=\"" << coordinate(px(p.x)) << "\" cy=\"" << coordinate(py(p.y)) << "\"/>";
      }
    }
    s << "</g>\n";
    return s.str();
  }

 private:
  static double fraction(double v, std::pair<int, int> r) {
    return (std::log10(v) - r.first) / static_cast<double>(r.second - r.first);
  }
  std::pair<int, int> x_, y_;
};

// A legend entry: a short line in the series' colour and dash, then its label.
std::string legend_key(const Series& ser) {
  return "<span class=\"key\"><svg width=\"28\" height=\"10\"><line x1=\"0\" y1=\"5\" x2=\"28\" y2=\"5\" stroke=\"" +
         ser.colour + "\" stroke-width=\"2\"" + (ser.dash.empty() ? "" : " stroke-dasharray=\"" + ser.dash + "\"") +
         "/></svg> " + markup_escape(ser.label) + "</span>";
}

// A vertical line at x across the plot: where a series' accurate context ends.
Series vertical(std::string label, std::string colour, std::string dash, double x, double y_bottom, double y_top) {
  return {std::move(label), std::move(colour), std::move(dash), "accurate", {{x, y_bottom}, {x, y_top}}};
}

// The worst margin (error / bound, SPEC.md section 9) against |position| + 1 for one vector
// file: one series per report and format, the line at 1 (above it a check fails) and, per
// series, a vertical line where its accurate context ends.
std::string error_plot(const std::string& file, const std::vector<RunReport>& reports) {
  std::vector<Series> series;
  struct Context {
    std::string label, colour, dash;
    double x;
  };
  std::vector<Context> contexts;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    const FileResult* result = nullptr;
    for (const auto& f : reports[r].files) {
      if (f.path == file) result = &f;
    }
    if (result == nullptr) continue;
    const std::string suffix = reports.size() > 1 ? " — " + reports[r].implementation : "";
    for (Format format : kAllFormats) {
      Series s{std::string(to_string(format)) + suffix, format_colour(format), kDashes[r % 4], "series", {}};
      for (const auto& e : result->by_position) {
        if (e.format == format) s.points.push_back({e.position + 1, e.worst_margin});
      }
      if (s.points.empty()) continue;
      const auto context = result->accurate_context.find(format);
      if (context != result->accurate_context.end() && context->second.up_to) {
        contexts.push_back({s.label + ": " + accurate_text(reports[r], context->second), s.colour, "2 2",
                            *context->second.up_to + 1});
      }
      series.push_back(std::move(s));
    }
  }
  if (series.empty()) return "";

  double x_min = HUGE_VAL, x_max = 0, y_max = 10;  // the line at 1 always inside
  bool off_scale = false;
  for (const auto& ser : series) {
    for (const auto& p : ser.points) {
      x_min = std::min(x_min, p.x);
      x_max = std::max(x_max, p.x);
      if (std::isinf(p.y)) {
        off_scale = true;
      } else {
        y_max = std::max(y_max, p.y);
      }
    }
  }
  const auto y_range = decades(kMarginFloor, y_max);
  const double y_bottom = std::pow(10.0, y_range.first), y_top = std::pow(10.0, y_range.second);
  // Clamp onto the drawing: below the floor (exact results included) and infinite margins.
  for (auto& s : series) {
    for (auto& p : s.points) p.y = std::clamp(p.y, kMarginFloor, y_top);
  }
  const auto x_range = decades(x_min, x_max);
  const LogPlot plot(x_range, y_range);
  const Series limit{"margin 1: above it a check fails", "#c0392b", "", "limit",
                     {{std::pow(10.0, x_range.first), 1.0}, {std::pow(10.0, x_range.second), 1.0}}};

  std::ostringstream s;
  s << "<figure>\n<svg class=\"error-plot\" data-file=\"" << markup_escape(file) << "\" data-series=\"" << series.size()
    << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" viewBox=\"0 0 "
    << kWidth << " " << kHeight << "\" role=\"img\" aria-label=\"worst margin against position, " << markup_escape(file)
    << "\">\n";
  s << "<text class=\"plot-title\" x=\"" << kLeft << "\" y=\"18\">" << markup_escape(file) << "</text>\n";
  s << plot.axes("|position| + 1", "worst margin (error / bound)");
  s << plot.series(limit);
  for (const auto& c : contexts) s << plot.series(vertical(c.label, c.colour, c.dash, c.x, y_bottom, y_top));
  for (const auto& ser : series) s << plot.series(ser);
  s << "</svg>\n<figcaption>";
  for (const auto& ser : series) s << legend_key(ser);
  s << legend_key(limit);
  for (const auto& c : contexts) s << legend_key(vertical(c.label, c.colour, c.dash, c.x, y_bottom, y_top));
  s << "<br>Each point is the largest margin of one element of a judged check at that position (a check not "
       "judged, its bound vacuous, draws none); margins below "
    << short_number(kMarginFloor) << " (exact results among them) are drawn at " << short_number(kMarginFloor);
  if (off_scale) s << "; infinite ones (the very bits asked for and not given, a NaN or an infinity) at the top edge";
  s << "; a dotted vertical line marks where a series' accurate context ends.</figcaption>\n</figure>\n";
  return s.str();
}

std::string family_of(const std::string& path) { return path.substr(0, path.find('/')); }

std::string verdict_section(const RunReport& r) {
  std::ostringstream s;
  const bool ok = r.conformant();
  s << "<section class=\"verdict " << (ok ? "pass" : "fail") << "\">\n<h2>" << markup_escape(r.implementation) << ": "
    << (ok ? "CONFORMANT" : "NOT CONFORMANT") << "</h2>\n<p>profile " << markup_escape(profile_name(r))
    << (rounding_text(r).empty() ? "" : " (" + markup_escape(rounding_text(r)) + ")") << " · "
    << r.passed() << " passed, " << r.failed() << " failed, " << r.not_judged() << " not judged (case x format checks)</p>\n";
  // The parts and the verdict line as the text summary says them (an unsupported property is
  // counted as such, never as passed or failed).
  s << "<ul class=\"parts\">\n";
  for (Part p : kAllParts) s << "<li class=\"part\">" << markup_escape(part_line(r, p)) << "</li>\n";
  s << "</ul>\n";
  if (const std::string context = overall_accurate_text(r); !context.empty()) {
    s << "<p class=\"accurate-context\">accurate context (every file): " << markup_escape(context) << "</p>\n";
  }
  s << "<p class=\"verdict-line\">" << markup_escape(verdict_line(r)) << "</p>\n";
  if (!r.replay.empty()) s << "<p>rerun: <code>" << markup_escape(r.replay) << "</code></p>\n";
  s << "</section>\n";
  return s.str();
}

std::string file_table(const RunReport& r) {
  std::ostringstream s;
  s << "<h3>" << markup_escape(r.implementation) << "</h3>\n<table class=\"files\">\n<tr><th>family</th><th>vectors</th>"
    << "<th>worst margin</th><th>passed</th><th>failed</th><th>not judged</th><th>worst scaled</th><th>worst ulp</th>"
    << "<th>worst margin at</th><th>per format</th></tr>\n";
  for (const auto& f : r.files) {
    s << "<tr class=\"" << (f.failed() ? "fail" : "pass") << "\"><td>" << markup_escape(family_of(f.path)) << "</td><td>"
      << markup_escape(f.path) << "</td><td class=\"margin\">" << short_number(f.worst_margin.value) << "</td><td>" << f.passed()
      << "</td><td>" << f.failed() << "</td><td>" << f.not_judged() << "</td><td>" << short_number(f.worst_scaled.value)
      << "</td><td>" << short_number(f.worst_ulp.value) << "</td><td>" << markup_escape(margin_where(f.worst_margin))
      << "</td><td class=\"formats\">";
    for (const auto& [format, m] : f.margin_by_format) {
      s << markup_escape(std::string(to_string(format))) << " margin " << short_number(m.value);
      const auto context = f.accurate_context.find(format);
      if (context != f.accurate_context.end()) {
        s << ", <span class=\"accurate\">" << markup_escape(accurate_text(r, context->second)) << "</span>";
      }
      s << "<br>";
    }
    s << "</td></tr>\n";
    // The first few per file: every one is in the JSON report.
    for (std::size_t i = 0; i < f.failures.size() && i < kFailuresShown; ++i) {
      s << "<tr class=\"failure\"><td></td><td colspan=\"9\">FAIL " << markup_escape(failure_text(f.failures[i]))
        << "</td></tr>\n";
    }
    if (f.failures.size() > kFailuresShown) {
      s << "<tr class=\"failure\"><td></td><td colspan=\"9\">and " << f.failures.size() - kFailuresShown
        << " more failures (all in the JSON report)</td></tr>\n";
    }
  }
  s << "</table>\n";
  return s.str();
}

std::string property_table(const RunReport& r) {
  if (r.properties.empty()) return "";
  std::ostringstream s;
  s << "<h3>" << markup_escape(r.implementation) << "</h3>\n<table class=\"properties\">\n"
    << "<tr><th>property</th><th>format</th><th>status</th><th>cases</th></tr>\n";
  for (const auto& p : r.properties) {
    // The row's class is its status (passed, failed, unsupported): what the browser test counts.
    s << "<tr class=\"property " << markup_escape(p.status) << "\"><td>" << markup_escape(p.name) << "</td><td>"
      << to_string(p.format) << "</td><td>" << markup_escape(p.status) << "</td><td>" << p.cases << "</td></tr>\n";
    if (p.status == "failed") {
      s << "<tr class=\"failure\"><td colspan=\"4\">counterexample:<pre>" << markup_escape(p.counterexample) << "</pre>";
      if (!r.replay.empty()) s << "replay: <code>" << markup_escape(r.replay) << "</code>";
      s << "</td></tr>\n";
    }
  }
  s << "</table>\n";
  return s.str();
}

constexpr const char* kStyle = R"(body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin:0 0 4px}h3{font-size:15px;margin:18px 0 6px}
.verdict{border-left:6px solid;padding:8px 14px;margin:10px 0;background:#f7f7f7}
.verdict.pass{border-color:#2b8a3e}.verdict.fail{border-color:#c0392b}
table{border-collapse:collapse;font-size:13px;margin-bottom:8px}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
td:nth-child(n+3):nth-child(-n+8){text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{color:#a61e1e}tr.failure td{color:#a61e1e;font-size:12px}
pre{white-space:pre-wrap;background:#fbeeee;padding:6px;margin:4px 0}
code{background:#eef;padding:1px 4px}
figure{margin:14px 0;display:inline-block;vertical-align:top}
figcaption{font-size:12px;max-width:720px}.key{margin-right:14px;white-space:nowrap}
svg.error-plot{background:#fff}.frame{fill:none;stroke:#888}.grid{stroke:#e4e4e4}
.tick{font-size:11px;fill:#444}.axis-label{font-size:12px;fill:#222}.plot-title{font-size:13px;font-weight:600}
g.series polyline{stroke-width:1.6}g.limit polyline{stroke-width:1.4}g.accurate polyline{stroke-width:1.2}
tr.property.failed td{color:#a61e1e}tr.property.unsupported td{color:#777}
)";

}  // namespace

std::string html_report(const std::vector<RunReport>& reports) {
  std::string names;
  for (const auto& r : reports) names += (names.empty() ? "" : " vs ") + r.implementation;
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>posenc "
    << (reports.size() > 1 ? "comparison" : "conformance report") << ": " << markup_escape(names) << "</title>\n<style>" << kStyle
    << "</style>\n</head>\n<body>\n<h1>posenc " << (reports.size() > 1 ? "comparison" : "conformance report") << ": "
    << markup_escape(names) << "</h1>\n";
  for (const auto& r : reports) s << verdict_section(r);

  s << "<h2>Margin against position</h2>\n<p>The worst margin (error / bound, SPEC.md section 9) over the judged "
       "checks of the valid cases at each position, per output format: a check fails above the line at 1. A check "
       "not judged (its bound vacuous: a pass there would say nothing) draws no point.</p>\n";
  std::set<std::string> seen;
  std::vector<std::string> files;
  for (const auto& r : reports) {
    for (const auto& f : r.files) {
      const std::string family = family_of(f.path);
      if ((family == "rope" || family == "sinusoidal" || family == "attention") && seen.insert(f.path).second) {
        files.push_back(f.path);
      }
    }
  }
  for (const auto& file : files) s << error_plot(file, reports);

  s << "<h2>Vector files</h2>\n";
  for (const auto& r : reports) s << file_table(r);
  bool any_properties = false;
  for (const auto& r : reports) any_properties = any_properties || !r.properties.empty();
  if (any_properties) {
    s << "<h2>Properties</h2>\n";
    for (const auto& r : reports) s << property_table(r);
  }
  s << "</body>\n</html>\n";
  return s.str();
}

}  // namespace posenc::conformance
