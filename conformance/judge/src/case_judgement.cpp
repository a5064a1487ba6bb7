#include "posenc/judge/case_judgement.hpp"

#include <cctype>
#include <cmath>
#include <sstream>

#include "posenc/vectors/case_types.hpp"
#include "vacuity.hpp"

namespace posenc::conformance {
namespace {

// Whether text holds n as a whole number (not as part of a longer one).
bool names_number(const std::string& text, std::int64_t n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  for (auto at = text.find(digits); at != std::string::npos; at = text.find(digits, at + 1)) {
    const bool before = at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]));
    const std::size_t end = at + digits.size();
    const bool after = end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]));
    if (!before && !after) return true;
  }
  return false;
}

}  // namespace

// The case's inputs, then its comment unless the comment only repeats the positions (most say
// "position 2047, random x"), so a failure never reads "position=2047 (position 2047)".
std::string describe_inputs(const VectorCase& c) {
  std::ostringstream s;
  auto list = [&](const char* name, const std::vector<std::int64_t>& v) {
    if (v.empty()) return;
    s << " " << name << "=";
    for (std::size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  };
  list("position", c.position);
  list("position_b", c.position_b);
  if (c.attention.queries > 0) {
    s << " queries=" << c.attention.queries << " keys=" << c.attention.keys;
    if (const auto p = case_position(c)) s << " positions up to " << static_cast<std::int64_t>(*p);
  }
  if (!c.x.empty()) s << " x[" << c.x.size() << "]";
  bool repeats = !c.position.empty();
  for (const auto* v : {&c.position, &c.position_b}) {
    for (auto p : *v) repeats = repeats && names_number(c.comment, p);
  }
  if (!repeats && !c.comment.empty()) s << " (" << c.comment << ")";
  return s.str();
}

std::vector<std::size_t> accepted_value_counts(const VectorGroup& g, const VectorCase& c) {
  std::vector<std::size_t> out{c.expected.size()};
  if (g.type == CaseType::attention && c.valid) {
    const auto a = std::get<cases::Attention>(typed_case(g, c));
    out.push_back(static_cast<std::size_t>(a.in.queries * a.p.query_heads * a.p.value_dim));
  }
  return out;
}

bool answers_without_lse(const VectorGroup& g, const VectorCase& c, std::size_t values) {
  const auto counts = accepted_value_counts(g, c);
  return counts.size() == 2 && values == counts[1];
}

std::string value_counts_text(const std::vector<std::size_t>& counts) {
  std::string s = std::to_string(counts.at(0)) + " outputs";
  if (counts.size() > 1) s += " (O then L), or " + std::to_string(counts[1]) + " (O alone)";
  return s;
}

std::string element_name(const VectorGroup& g, const VectorCase& c, std::size_t j) {
  if (g.type != CaseType::attention || !c.valid) return "element " + std::to_string(j);
  const auto a = std::get<cases::Attention>(typed_case(g, c));
  return attention_output_name(a.p, a.in.queries, j);
}

std::optional<double> case_position(const VectorCase& c) {
  const AttentionData& a = c.attention;
  if (!a.query_positions.empty() || !a.key_positions.empty()) {
    double p = 0;
    for (auto v : a.query_positions) p = std::max(p, std::fabs(static_cast<double>(v)));
    for (auto v : a.key_positions) p = std::max(p, std::fabs(static_cast<double>(v)));
    return p;
  }
  if (c.position.empty()) return std::nullopt;
  double p = 0;
  for (auto v : c.position) p = std::max(p, std::fabs(static_cast<double>(v)));
  for (auto v : c.position_b) p = std::max(p, std::fabs(static_cast<double>(v)));
  return p;
}

CaseJudgement judge_values(const VectorGroup& g, const VectorCase& c, const std::vector<ElementSpec>& specs,
                           std::span<const double> values, Format f, const Tolerance& t, bool derived) {
  Tolerance tolerance = t;
  if (derived && tolerance.profile == Profile::exact) tolerance.profile = Profile::strict;
  const std::vector<double> largest = largest_errors(g, c, specs);
  CaseJudgement out;
  out.elements.reserve(values.size());
  out.vacuous.reserve(values.size());
  for (std::size_t j = 0; j < values.size() && j < specs.size(); ++j) {
    const std::uint64_t expected = c.expected.of(f)[j];
    const ElementError e = check_element(specs[j], expected, values[j], f, tolerance);
    const bool vacuous =
        e.pass && std::isfinite(to_double(f, expected)) && bound_vacuous(specs[j], largest[j], e.bound, f);
    out.elements.push_back(e);
    out.vacuous.push_back(vacuous);
    out.any_vacuous = out.any_vacuous || vacuous;
    if (!e.pass && out.pass) {
      out.pass = false;
      out.first_failure = j;
      std::ostringstream s;
      s << element_name(g, c, j) << " = " << std::hexfloat << values[j] << ", expected " << to_double(f, expected)
        << std::defaultfloat << " (margin " << e.margin << ": scaled error " << e.scaled << ", bound " << e.bound
        << ", " << e.ulp << " ulp)" << describe_inputs(c);
      out.message = s.str();
    }
  }
  return out;
}

}  // namespace posenc::conformance
