// The verdict of a run (SPEC.md section 9): counts per part, format and reason, each part's
// verdict and what was asked for and judged nowhere.
#include <algorithm>
#include <array>

#include "posenc/judge/runner.hpp"

namespace posenc::conformance {

std::string thousands(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string not_judged_reasons(const PartCounts& c) {
  std::string s;
  for (NotJudged why : kAllNotJudged) {
    if (const auto n = c.not_judged_for(why); n > 0) s += (s.empty() ? "" : ", ") + std::string(to_string(why)) + " " + thousands(n);
  }
  return s;
}

namespace {

PartCounts file_counts(const FileResult& f) {
  PartCounts c = f.accuracy;
  c.add(f.validation);
  return c;
}

constexpr std::array kPartNames{"accuracy", "validation", "properties"};
constexpr std::array kNotJudgedNames{"no entry point", "refused", "inputs not representable", "bound vacuous",
                                     "beyond --max-position"};
constexpr std::array kNotJudgedJson{"noEntryPoint", "refused", "notRepresentable", "boundVacuous", "beyondMaxPosition"};

}  // namespace

std::string_view to_string(Part p) { return kPartNames[static_cast<std::size_t>(p)]; }

Part parse_part(std::string_view s, const std::string& option) {
  for (Part p : kAllParts) {
    if (s == to_string(p)) return p;
  }
  throw InvalidParameter(option, "'" + std::string(s) + "'", "a list of accuracy, validation, properties");
}

std::string_view to_string(NotJudged why) { return kNotJudgedNames[static_cast<std::size_t>(why)]; }
std::string_view json_name(NotJudged why) { return kNotJudgedJson[static_cast<std::size_t>(why)]; }

std::int64_t PartCounts::passed() const {
  std::int64_t n = 0;
  for (const auto& [f, c] : judged) n += c.passed;
  return n;
}
std::int64_t PartCounts::failed() const {
  std::int64_t n = 0;
  for (const auto& [f, c] : judged) n += c.failed;
  return n;
}
std::int64_t PartCounts::without_lse() const {
  std::int64_t n = 0;
  for (const auto& [f, c] : judged) n += c.without_lse;
  return n;
}
std::int64_t PartCounts::not_judged_for(NotJudged why) const {
  std::int64_t n = 0;
  if (const auto it = not_judged.find(why); it != not_judged.end()) {
    for (const auto& [f, count] : it->second) n += count;
  }
  return n;
}
std::int64_t PartCounts::not_judged_total() const {
  std::int64_t n = 0;
  for (NotJudged why : kAllNotJudged) n += not_judged_for(why);
  return n;
}
void PartCounts::add(const PartCounts& other) {
  for (const auto& [f, c] : other.judged) {
    judged[f].passed += c.passed;
    judged[f].failed += c.failed;
    judged[f].without_lse += c.without_lse;
  }
  for (const auto& [why, by_format] : other.not_judged) {
    for (const auto& [f, n] : by_format) not_judged[why][f] += n;
  }
}

std::int64_t RunReport::passed() const {
  std::int64_t n = 0;
  for (const auto& f : files) n += f.passed();
  return n;
}
std::int64_t RunReport::failed() const {
  std::int64_t n = 0;
  for (const auto& f : files) n += f.failed();
  return n;
}
std::int64_t RunReport::not_judged() const {
  std::int64_t n = 0;
  for (const auto& f : files) n += f.not_judged();
  return n;
}

PartCounts RunReport::part_counts(Part p) const {
  PartCounts c;
  for (const auto& f : files) c.add(p == Part::validation ? f.validation : f.accuracy);
  return c;
}

bool RunReport::checked(Part p) const { return std::find(checks.begin(), checks.end(), p) != checks.end(); }

PartVerdict RunReport::verdict(Part p) const {
  PartVerdict v;
  v.checked = checked(p);
  if (!v.checked) return v;
  if (p == Part::properties) {
    std::int64_t failed = 0, passed = 0;
    for (const auto& r : properties) {
      failed += r.status == "failed";
      passed += r.status == "passed";
    }
    if (failed > 0) v.reasons.push_back(thousands(failed) + (failed == 1 ? " property failed" : " properties failed"));
    if (passed == 0 && failed == 0) v.reasons.push_back("no property judged (every one unsupported)");
    return v;
  }
  const PartCounts c = part_counts(p);
  if (c.failed() > 0) v.reasons.push_back(thousands(c.failed()) + (c.failed() == 1 ? " check failed" : " checks failed"));
  // A part with cases in the selection, none of them judged, vouches for nothing.
  if (c.passed() + c.failed() == 0 && c.not_judged_total() > 0) {
    v.reasons.push_back("nothing judged (" + not_judged_reasons(c) + ")");
  }
  return v;
}

std::vector<std::string> RunReport::coverage_gaps() const {
  std::vector<std::string> gaps;
  // Only the vectors' parts judge files and formats (--checks properties runs none of them).
  if (!checked(Part::accuracy) && !checked(Part::validation)) return gaps;
  if (passed() + failed() == 0) gaps.push_back("no check judged");
  if (files_asked) {
    for (const auto& f : files) {
      if (f.passed() + f.failed() > 0) continue;
      const std::string why = not_judged_reasons(file_counts(f));
      gaps.push_back(f.path + " asked for and judged nowhere" + (why.empty() ? "" : " (" + why + ")"));
    }
  }
  PartCounts all;
  for (const auto& f : files) all.add(file_counts(f));
  for (Format format : asked_formats) {
    const auto it = all.judged.find(format);
    if (it != all.judged.end() && it->second.judged() > 0) continue;
    std::string why;
    for (NotJudged reason : kAllNotJudged) {
      const auto r = all.not_judged.find(reason);
      if (r == all.not_judged.end()) continue;
      const auto n = r->second.find(format);
      if (n != r->second.end() && n->second > 0) {
        why += (why.empty() ? "" : ", ") + std::string(to_string(reason)) + " " + thousands(n->second);
      }
    }
    gaps.push_back(std::string(to_string(format)) + " asked for and judged nowhere" + (why.empty() ? "" : " (" + why + ")"));
  }
  return gaps;
}

bool RunReport::conformant() const {
  for (Part p : kAllParts) {
    if (!verdict(p).conformant()) return false;
  }
  return coverage_gaps().empty();
}

}  // namespace posenc::conformance
