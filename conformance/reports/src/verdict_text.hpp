#pragma once
// The words every report uses for a margin and an accurate context (SPEC.md section 9), so the
// text summary, JUnit, the HTML page and `compare` say the same thing the same way.
#include <cmath>
#include <cstdio>
#include <string>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

inline std::string short_number(double v) {
  if (std::isinf(v)) return "inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

// A position as an integer (they are integers; %.3g would hide 2047 vs 2048).
inline std::string position_text(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", p);
  return text;
}

inline std::string profile_name(const RunReport& r) {
  return r.tolerance.scaled_bound ? "explicit bound " + short_number(*r.tolerance.scaled_bound)
                                  : std::string(to_string(r.tolerance.profile));
}

// "tcId 251 f32 element 28 position 2047", or "" when nothing was judged.
inline std::string margin_where(const Margin& m) {
  if (m.tc_id == 0) return "";
  std::string s = "tcId " + std::to_string(m.tc_id) + " " + std::string(to_string(m.format));
  s += m.element ? " element " + std::to_string(*m.element) : " (no values)";
  if (m.position) s += " position " + position_text(*m.position);
  return s;
}

// "strict up to position 2047", "strict nowhere (fails at the smallest position)".
inline std::string accurate_text(const RunReport& r, const std::optional<double>& up_to) {
  return profile_name(r) + (up_to ? " up to position " + position_text(*up_to) : " nowhere (fails at the smallest position)");
}

// "tcId 9 f32: element 0 = ..." (the failure's message names the rest).
inline std::string failure_text(const Failure& f) {
  return "tcId " + std::to_string(f.tc_id) + " " + std::string(to_string(f.format)) + ": " + f.message;
}

}  // namespace posenc::conformance
