// The JSON report of a run (SPEC.md section 9) and its strict reader, which `posenc compare`
// uses: a report is input from elsewhere, so anything malformed is refused, never guessed.
#include <cmath>
#include <limits>
#include <optional>

#include "posenc/vectors/json_reader.hpp"
#include "posenc/reports/json.hpp"

namespace posenc::conformance {
namespace {

constexpr const char* kSchema = "posenc-report-2";
using json_io::Json;
using json_io::Location;

// Errors are JSON numbers; an infinite one (a NaN or infinite output) is the string "inf".
Json error_value(double v) { return std::isinf(v) ? Json("inf") : Json(v); }

double read_error_value(const Json& j, const Location& at) {
  if (j.is_string() && j.get<std::string>() == "inf") return std::numeric_limits<double>::infinity();
  if (!j.is_number()) at.fail("expected a number or \"inf\"");
  const double v = j.get<double>();
  if (!(v >= 0) || std::isinf(v)) at.fail("expected a finite number >= 0 or \"inf\"");
  return v;
}

std::int64_t read_count(const Json& j, const Location& at) {
  const std::int64_t v = json_io::read_small_int(j, at);
  if (v < 0) at.fail("expected a count >= 0, got " + std::to_string(v));
  return v;
}

Json worst_json(const Worst& w) { return {{"value", error_value(w.value)}, {"tcId", w.tc_id}, {"where", w.where}}; }

Worst read_worst(const Json& j, const Location& at) {
  json_io::require_only(j, {"value", "tcId", "where"}, at);
  Worst w;
  w.value = read_error_value(json_io::member(j, "value", at), at.field("value"));
  w.tc_id = json_io::read_small_int(json_io::member(j, "tcId", at), at.field("tcId"));
  w.where = json_io::read_string(json_io::member(j, "where", at), at.field("where"));
  return w;
}

Format read_format_name(const Json& j, const Location& at) {
  const std::string format = json_io::read_string(j, at);
  try {
    return parse_format(format);
  } catch (const Error&) {
    at.fail("'" + format + "' is not one of f64, f32, bf16, f16");
  }
}

// A position: a finite number >= 0, or null (none).
std::optional<double> read_optional_position(const Json& j, const Location& at) {
  if (j.is_null()) return std::nullopt;
  const double v = read_error_value(j, at);
  if (std::isinf(v)) at.fail("expected a finite position or null");
  return v;
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json margin_json(const Margin& m) {
  return {{"value", error_value(m.value)},
          {"tcId", m.tc_id},
          {"element", m.element ? Json(*m.element) : Json(nullptr)},
          {"format", std::string(to_string(m.format))},
          {"position", optional_json(m.position)}};
}

Margin read_margin(const Json& j, const Location& at) {
  json_io::require_only(j, {"value", "tcId", "element", "format", "position"}, at);
  Margin m;
  m.value = read_error_value(json_io::member(j, "value", at), at.field("value"));
  m.tc_id = json_io::read_small_int(json_io::member(j, "tcId", at), at.field("tcId"));
  const Json& element = json_io::member(j, "element", at);
  if (!element.is_null()) m.element = read_count(element, at.field("element"));
  m.format = read_format_name(json_io::member(j, "format", at), at.field("format"));
  m.position = read_optional_position(json_io::member(j, "position", at), at.field("position"));
  return m;
}

Json failure_json(const Failure& f) {
  return {{"group", f.group}, {"groupComment", f.group_comment}, {"tcId", f.tc_id},
          {"format", std::string(to_string(f.format))}, {"message", f.message}};
}

Failure read_failure(const Json& j, const Location& at) {
  json_io::require_only(j, {"group", "groupComment", "tcId", "format", "message"}, at);
  Failure f;
  f.group = read_count(json_io::member(j, "group", at), at.field("group"));
  f.group_comment = json_io::read_string(json_io::member(j, "groupComment", at), at.field("groupComment"));
  f.tc_id = json_io::read_small_int(json_io::member(j, "tcId", at), at.field("tcId"));
  f.format = read_format_name(json_io::member(j, "format", at), at.field("format"));
  f.message = json_io::read_string(json_io::member(j, "message", at), at.field("message"));
  return f;
}

PositionError read_position_error(const Json& j, const Location& at) {
  json_io::require_only(j, {"position", "format", "worstScaled", "bound"}, at);
  PositionError e;
  e.position = read_error_value(json_io::member(j, "position", at), at.field("position"));
  if (std::isinf(e.position)) at.field("position").fail("expected a finite position");
  e.format = read_format_name(json_io::member(j, "format", at), at.field("format"));
  e.worst_scaled = read_error_value(json_io::member(j, "worstScaled", at), at.field("worstScaled"));
  e.bound = read_error_value(json_io::member(j, "bound", at), at.field("bound"));
  return e;
}

FileResult read_group(const Json& j, const Location& at) {
  json_io::require_only(j,
                        {"file", "passed", "failed", "unsupported", "beyondMaxPosition", "worstMargin", "worstMarginByFormat",
                         "accurateUpTo", "worstScaled", "worstUlp", "failures", "errorByPosition"},
                        at);
  FileResult r;
  r.path = json_io::read_string(json_io::member(j, "file", at), at.field("file"));
  r.passed = read_count(json_io::member(j, "passed", at), at.field("passed"));
  r.failed = read_count(json_io::member(j, "failed", at), at.field("failed"));
  r.unsupported = read_count(json_io::member(j, "unsupported", at), at.field("unsupported"));
  r.beyond_max_position = read_count(json_io::member(j, "beyondMaxPosition", at), at.field("beyondMaxPosition"));
  r.worst_margin = read_margin(json_io::member(j, "worstMargin", at), at.field("worstMargin"));
  // Objects keyed by format name.
  auto by_format = [&](const char* key, auto read) {
    const Json& o = json_io::member(j, key, at);
    json_io::require_object(o, at.field(key));
    for (const auto& [name, value] : o.items()) {
      read(read_format_name(Json(name), at.field(key)), value, at.field(key).field(name));
    }
  };
  by_format("worstMarginByFormat", [&](Format f, const Json& v, const Location& where) {
    r.margin_by_format[f] = read_margin(v, where);
    if (r.margin_by_format[f].format != f) where.field("format").fail("differs from its key");
  });
  by_format("accurateUpTo", [&](Format f, const Json& v, const Location& where) {
    r.accurate_up_to[f] = read_optional_position(v, where);
  });
  r.worst_scaled = read_worst(json_io::member(j, "worstScaled", at), at.field("worstScaled"));
  r.worst_ulp = read_worst(json_io::member(j, "worstUlp", at), at.field("worstUlp"));
  // A margin above 1 is a failed check: a group edited to hide its failures is refused.
  if (r.failed == 0 && r.worst_margin.value > 1) at.field("worstMargin").fail("above 1 in a group without failures");
  const Json& failures = json_io::member(j, "failures", at);
  if (!failures.is_array()) at.field("failures").fail("expected an array");
  for (std::size_t i = 0; i < failures.size(); ++i) r.failures.push_back(read_failure(failures[i], at.field("failures").index(i)));
  if (static_cast<std::int64_t>(r.failures.size()) != r.failed) {
    at.field("failures").fail("lists " + std::to_string(r.failures.size()) + " failures, the group counts " +
                              std::to_string(r.failed));
  }
  const Json& points = json_io::member(j, "errorByPosition", at);
  if (!points.is_array()) at.field("errorByPosition").fail("expected an array");
  for (std::size_t i = 0; i < points.size(); ++i) {
    r.by_position.push_back(read_position_error(points[i], at.field("errorByPosition").index(i)));
  }
  return r;
}

PropertyResult read_property(const Json& j, const Location& at) {
  json_io::require_only(j, {"name", "status", "cases", "counterexample"}, at);
  PropertyResult p;
  p.name = json_io::read_string(json_io::member(j, "name", at), at.field("name"));
  p.status = json_io::read_string(json_io::member(j, "status", at), at.field("status"));
  if (p.status != "passed" && p.status != "failed" && p.status != "unsupported") {
    at.field("status").fail("'" + p.status + "' is not one of passed, failed, unsupported");
  }
  p.cases = static_cast<int>(std::min<std::int64_t>(read_count(json_io::member(j, "cases", at), at.field("cases")),
                                                    std::numeric_limits<int>::max()));
  p.counterexample = json_io::read_string(json_io::member(j, "counterexample", at), at.field("counterexample"));
  return p;
}

}  // namespace

std::string report_json(const RunReport& report) {
  Json j;
  j["schema"] = kSchema;
  j["implementation"] = report.implementation;
  j["profile"] = report.tolerance.scaled_bound ? "explicit" : std::string(to_string(report.tolerance.profile));
  if (report.tolerance.scaled_bound) j["scaledBound"] = *report.tolerance.scaled_bound;
  j["replay"] = report.replay;
  j["conformant"] = report.conformant();
  j["summary"] = {{"passed", report.passed()},
                  {"failed", report.failed()},
                  {"unsupported", report.unsupported()},
                  {"beyondMaxPosition", report.beyond_max_position()}};
  j["groups"] = Json::array();
  for (const auto& f : report.files) {
    Json points = Json::array();
    for (const auto& e : f.by_position) {
      points.push_back({{"position", e.position},
                        {"format", std::string(to_string(e.format))},
                        {"worstScaled", error_value(e.worst_scaled)},
                        {"bound", e.bound}});
    }
    Json failures = Json::array();
    for (const auto& failure : f.failures) failures.push_back(failure_json(failure));
    Json margins = Json::object(), accurate = Json::object();
    for (const auto& [format, m] : f.margin_by_format) margins[std::string(to_string(format))] = margin_json(m);
    for (const auto& [format, p] : f.accurate_up_to) accurate[std::string(to_string(format))] = optional_json(p);
    j["groups"].push_back({{"file", f.path},
                           {"passed", f.passed},
                           {"failed", f.failed},
                           {"unsupported", f.unsupported},
                           {"beyondMaxPosition", f.beyond_max_position},
                           {"worstMargin", margin_json(f.worst_margin)},
                           {"worstMarginByFormat", std::move(margins)},
                           {"accurateUpTo", std::move(accurate)},
                           {"worstScaled", worst_json(f.worst_scaled)},
                           {"worstUlp", worst_json(f.worst_ulp)},
                           {"failures", std::move(failures)},
                           {"errorByPosition", std::move(points)}});
  }
  j["properties"] = Json::array();
  for (const auto& p : report.properties) {
    j["properties"].push_back(
        {{"name", p.name}, {"status", p.status}, {"cases", p.cases}, {"counterexample", p.counterexample}});
  }
  return j.dump(2) + "\n";
}

RunReport parse_report_json(const std::string& text, const std::string& source) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw VectorFileError(source + ": not JSON: " + e.what());
  }
  const Location at{&source, std::nullopt, ""};
  json_io::require_only(j, {"schema", "implementation", "profile", "scaledBound", "replay", "conformant", "summary", "groups",
                            "properties"},
                        at);
  const std::string schema = json_io::read_string(json_io::member(j, "schema", at), at.field("schema"));
  if (schema != kSchema) {
    at.field("schema").fail("unknown report schema '" + schema + "' (this posenc reads " + kSchema + ")");
  }
  RunReport r;
  r.implementation = json_io::read_string(json_io::member(j, "implementation", at), at.field("implementation"));
  const std::string profile = json_io::read_string(json_io::member(j, "profile", at), at.field("profile"));
  if (profile == "explicit") {
    const Json& b = json_io::member(j, "scaledBound", at);
    r.tolerance.scaled_bound = read_error_value(b, at.field("scaledBound"));
  } else {
    try {
      r.tolerance.profile = parse_profile(profile);
    } catch (const Error&) {
      at.field("profile").fail("'" + profile + "' is not one of exact, strict, standard, explicit");
    }
  }
  r.replay = json_io::read_string(json_io::member(j, "replay", at), at.field("replay"));
  const Json& groups = json_io::member(j, "groups", at);
  if (!groups.is_array()) at.field("groups").fail("expected an array");
  for (std::size_t i = 0; i < groups.size(); ++i) r.files.push_back(read_group(groups[i], at.field("groups").index(i)));
  const Json& properties = json_io::member(j, "properties", at);
  if (!properties.is_array()) at.field("properties").fail("expected an array");
  for (std::size_t i = 0; i < properties.size(); ++i) {
    r.properties.push_back(read_property(properties[i], at.field("properties").index(i)));
  }
  // The stored verdict and counts must be the ones the groups add up to: a report edited to say
  // "conformant" over failing groups is refused.
  const bool conformant = json_io::read_bool(json_io::member(j, "conformant", at), at.field("conformant"));
  if (conformant != r.conformant()) at.field("conformant").fail("disagrees with the groups and properties it reports");
  const Json& summary = json_io::member(j, "summary", at);
  json_io::require_only(summary, {"passed", "failed", "unsupported", "beyondMaxPosition"}, at.field("summary"));
  for (const auto& [key, value] : {std::pair{"passed", r.passed()},
                                   {"failed", r.failed()},
                                   {"unsupported", r.unsupported()},
                                   {"beyondMaxPosition", r.beyond_max_position()}}) {
    if (read_count(json_io::member(summary, key, at.field("summary")), at.field("summary").field(key)) != value) {
      at.field("summary").field(key).fail("disagrees with the sum over the groups (" + std::to_string(value) + ")");
    }
  }
  return r;
}

}  // namespace posenc::conformance
