#include "serve_verdict.hpp"

#include <cmath>

namespace posenc::cli {

using conformance::json_io::Json;

Json json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

namespace {

std::string hex_of(Format f, double v) {
  if (std::isnan(v)) return "nan";
  return hex_float(f, *exact_bits(f, v));  // the values were read as f values
}

Json element_json(const conformance::VectorCase& c, const conformance::ElementError& e, std::span<const double> got,
                  std::size_t j, Format f, bool vacuous) {
  Json out{{"element", j},
           {"got", hex_of(f, got[j])},
           {"expected", hex_float(f, c.expected.of(f)[j])},
           {"margin", json_number(e.margin)},
           {"scaledError", json_number(e.scaled)},
           {"bound", json_number(e.bound)},
           {"ulp", json_number(e.ulp)}};
  if (vacuous) out["vacuous"] = true;
  return out;
}

}  // namespace

Json serve_verdict(const conformance::VectorGroup& g, const conformance::VectorCase& c, const conformance::Outcome& o,
                   Format f, const conformance::Tolerance& t, bool elements) {
  using conformance::Status;
  Json v{{"tcId", c.tc_id}, {"format", to_string(f)}};
  if (const auto p = conformance::case_position(c)) v["position"] = *p;
  auto verdict = [&](const char* what, const std::string& message) {
    v["verdict"] = what;
    if (!message.empty()) v["message"] = message;
    return v;
  };
  // The same outcomes, and the same words, as the runner's check of a case (runner.cpp).
  if (o.status == Status::unsupported) return verdict("not judged", "refused");
  if (!c.valid) {
    if (o.status == Status::invalid) return verdict("pass", "");
    return verdict("fail", "accepted invalid parameters (expected an error on " + c.error + ")");
  }
  if (o.status == Status::invalid) {
    v["margin"] = "inf";
    return verdict("fail", "refused valid parameters: " + o.message);  // the runner's words
  }
  const auto specs = conformance::element_specs(g, c);
  const conformance::CaseJudgement judged = conformance::judge_values(g, c, specs, o.values, f, t, o.derived);
  // The worst element the runner counts: vacuous ones stay out, as in the reports.
  std::optional<std::size_t> worst;
  for (std::size_t j = 0; j < judged.elements.size(); ++j) {
    if (judged.vacuous[j]) continue;
    if (!worst || judged.elements[j].margin > judged.elements[*worst].margin) worst = j;
  }
  v["margin"] = worst ? json_number(judged.elements[*worst].margin) : Json(nullptr);
  if (worst) v["worst"] = element_json(c, judged.elements[*worst], o.values, *worst, f, false);
  if (judged.first_failure) {
    v["failure"] = element_json(c, judged.elements[*judged.first_failure], o.values, *judged.first_failure, f, false);
  }
  if (elements) {
    Json all = Json::array();
    for (std::size_t j = 0; j < judged.elements.size(); ++j) {  // every value given (O alone: no L)
      all.push_back(element_json(c, judged.elements[j], o.values, j, f, judged.vacuous[j]));
    }
    v["elements"] = std::move(all);
  }
  if (!judged.pass) return verdict("fail", judged.message);
  if (judged.any_vacuous) return verdict("not judged", "bound vacuous");
  return verdict("pass", "");
}

}  // namespace posenc::cli
