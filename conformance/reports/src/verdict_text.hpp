#pragma once
// The words every report uses for a margin and an accurate context (SPEC.md section 9), so the
// text summary, JUnit, the HTML page and `compare` say the same thing the same way.
#include <cmath>
#include <cstdio>
#include <map>
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

// Why an accurate context ends, and the checks below it not judged for a vacuous bound: "fails
// at position 7", "last judged position; 10 checks not judged: bound vacuous".
inline std::string accurate_end_text(const AccurateContext& c) {
  std::string s = c.fails_at ? "fails at position " + position_text(*c.fails_at) : "last judged position";
  if (c.bound_vacuous > 0) {
    s += "; " + thousands(c.bound_vacuous) + (c.bound_vacuous == 1 ? " check" : " checks") + " not judged: bound vacuous";
  }
  return s;
}

// "standard up to position 4194305 (last judged position; 10 checks not judged: bound vacuous)",
// "strict up to position 7 (fails at position 100)", "strict nowhere (fails at position 0)".
inline std::string accurate_text(const RunReport& r, const AccurateContext& c) {
  return profile_name(r) + (c.up_to ? " up to position " + position_text(*c.up_to) : " nowhere") + " (" +
         accurate_end_text(c) + ")";
}

// "f32 standard up to position ... (...); bf16 ...": the run's accurate context per format over
// every file, or "" when no check with positions was judged.
inline std::string overall_accurate_text(const RunReport& r) {
  std::string s;
  for (const auto& [format, c] : r.accurate_context) {
    s += (s.empty() ? "" : "; ") + std::string(to_string(format)) + " " + accurate_text(r, c);
  }
  return s;
}

// "tcId 9 f32: element 0 = ..." (the failure's message names the rest).
inline std::string failure_text(const Failure& f) {
  return "tcId " + std::to_string(f.tc_id) + " " + std::string(to_string(f.format)) + ": " + f.message;
}

// "2,481 checks judged (f32 1,200, bf16 640, f16 641)": case x format checks, per format.
inline std::string judged_text(const PartCounts& c) {
  std::string per_format;
  for (const auto& [f, n] : c.judged) {
    per_format += (per_format.empty() ? "" : ", ") + std::string(to_string(f)) + " " + thousands(n.judged());
  }
  std::string s = thousands(c.passed() + c.failed()) + " checks judged" + (per_format.empty() ? "" : " (" + per_format + ")");
  // Attention checks whose implementation gave O alone: their L was not judged (SPEC.md section 9).
  if (c.without_lse() > 0) s += ", " + thousands(c.without_lse()) + " on O alone (L not given)";
  return s;
}

// "scores rounded to bf16 for bf16, f16; probabilities rounded to bf16 for f64, f32, bf16, f16":
// attention's declared roundings (SPEC.md section 5), or "" when there is none.
inline std::string rounding_text(const RunReport& r) {
  std::string s;
  for (const auto& [what, formats] : {std::pair{"scores", &r.tolerance.score}, {"probabilities", &r.tolerance.probability}}) {
    // Storage formats grouped by the format they round to, in format order.
    std::map<Format, std::string> by_rounding;
    for (Format f : kAllFormats) {
      const auto it = formats->find(f);
      if (it == formats->end() || !it->second) continue;
      std::string& storage = by_rounding[*it->second];
      storage += (storage.empty() ? "" : ", ") + std::string(to_string(f));
    }
    std::string part;
    for (const auto& [rounding, storage] : by_rounding) {
      part += (part.empty() ? "" : ", ") + std::string("to ") + std::string(to_string(rounding)) + " for " + storage;
    }
    if (!part.empty()) s += (s.empty() ? "" : "; ") + std::string(what) + " rounded " + part;
  }
  return s;
}

// "300 (no entry point 200, bound vacuous 100)", or "none".
inline std::string not_judged_text(const PartCounts& c) {
  const auto n = c.not_judged_total();
  return n == 0 ? "none" : thousands(n) + " (" + not_judged_reasons(c) + ")";
}

// "21 properties judged (f64 21, f32 12), 9 unsupported" over the property results.
inline std::string properties_text(const RunReport& r) {
  std::map<Format, std::int64_t> judged;
  std::int64_t total = 0, unsupported = 0;
  for (const auto& p : r.properties) {
    if (p.status == "unsupported") {
      ++unsupported;
    } else {
      ++judged[p.format];
      ++total;
    }
  }
  std::string per_format;
  for (const auto& [f, n] : judged) per_format += (per_format.empty() ? "" : ", ") + std::string(to_string(f)) + " " + thousands(n);
  std::string s = thousands(total) + (total == 1 ? " property judged" : " properties judged");
  if (!per_format.empty()) s += " (" + per_format + ")";
  if (unsupported > 0) s += ", " + thousands(unsupported) + " unsupported";
  return s;
}

// One part's line: "accuracy: CONFORMANT, 2,481 checks judged (...); not judged: ...", or
// "validation: NOT CONFORMANT (3 checks failed), ..." or "properties: not checked".
inline std::string part_line(const RunReport& r, Part p) {
  const PartVerdict v = r.verdict(p);
  std::string s = std::string(to_string(p)) + ": ";
  if (!v.checked) return s + "not checked";
  s += v.conformant() ? "CONFORMANT" : "NOT CONFORMANT";
  if (!v.reasons.empty()) {
    std::string why;
    for (const auto& reason : v.reasons) why += (why.empty() ? "" : "; ") + reason;
    s += " (" + why + ")";
  }
  if (p == Part::properties) return s + ", " + properties_text(r);
  const PartCounts c = r.part_counts(p);
  if (c.passed() + c.failed() + c.not_judged_total() == 0) return s + ", no case of this part in the selection";
  return s + ", " + judged_text(c) + "; not judged: " + not_judged_text(c);
}

// The last line: "CONFORMANT: 2,481 checks judged (f32 ...), 21 properties judged; not judged:
// 300 (...)", with the reasons first when it is NOT CONFORMANT.
inline std::string verdict_line(const RunReport& r) {
  std::string s = r.conformant() ? "CONFORMANT" : "NOT CONFORMANT";
  std::string why;
  for (Part p : kAllParts) {
    for (const auto& reason : r.verdict(p).reasons) why += (why.empty() ? "" : "; ") + std::string(to_string(p)) + " " + reason;
  }
  for (const auto& gap : r.coverage_gaps()) why += (why.empty() ? "" : "; ") + gap;
  if (!why.empty()) s += " (" + why + ")";
  PartCounts all = r.part_counts(Part::accuracy);
  all.add(r.part_counts(Part::validation));
  s += ": " + judged_text(all);
  if (r.checked(Part::properties)) s += ", " + properties_text(r);
  return s + "; not judged: " + not_judged_text(all);
}

}  // namespace posenc::conformance
