// The JSON report of a run (SPEC.md section 9) and its strict reader, which `posenc compare`
// uses: a report is input from elsewhere, so anything malformed is refused, never guessed.
#include <cmath>
#include <limits>
#include <optional>

#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/json_writer.hpp"
#include "posenc/reports/json.hpp"

namespace posenc::conformance {
namespace {

// 4: the accurate context as an object per format (accurateContext), ended by a failure or the
// last judged position, never by a check not judged; attention's score and probability formats
// (scoreFormats, probabilityFormats) and the judged checks on O alone (withoutL).
constexpr const char* kSchema = "posenc-report-4";
using json_io::Json;
using json_io::JsonValue;
using json_io::Location;

// Errors are JSON numbers; an infinite one (a NaN or infinite output) is the string "inf".
Json error_value(double v) { return std::isinf(v) ? Json("inf") : Json(v); }

double read_error_value(const JsonValue& j, const Location& at) {
  if (j.is_string() && j.string() == "inf") return std::numeric_limits<double>::infinity();
  if (!j.is_number()) at.fail("expected a number or \"inf\"");
  const double v = j.number();
  if (!(v >= 0) || std::isinf(v)) at.fail("expected a finite number >= 0 or \"inf\"");
  return v;
}

std::int64_t read_count(const JsonValue& j, const Location& at) {
  const std::int64_t v = json_io::read_small_int(j, at);
  if (v < 0) at.fail("expected a count >= 0, got " + std::to_string(v));
  return v;
}

Json worst_json(const Worst& w) { return {{"value", error_value(w.value)}, {"tcId", w.tc_id}, {"where", w.where}}; }

Worst read_worst(const JsonValue& j, const Location& at) {
  json_io::require_only(j, {"value", "tcId", "where"}, at);
  Worst w;
  w.value = read_error_value(json_io::member(j, "value", at), at.field("value"));
  w.tc_id = json_io::read_small_int(json_io::member(j, "tcId", at), at.field("tcId"));
  w.where = json_io::read_string(json_io::member(j, "where", at), at.field("where"));
  return w;
}

Format parse_format_name(const std::string& format, const Location& at) {
  try {
    return parse_format(format);
  } catch (const Error&) {
    at.fail("'" + format + "' is not one of f64, f32, bf16, f16");
  }
}

Format read_format_name(const JsonValue& j, const Location& at) { return parse_format_name(json_io::read_string(j, at), at); }

// A position: a finite number >= 0, or null (none).
std::optional<double> read_optional_position(const JsonValue& j, const Location& at) {
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

Margin read_margin(const JsonValue& j, const Location& at) {
  json_io::require_only(j, {"value", "tcId", "element", "format", "position"}, at);
  Margin m;
  m.value = read_error_value(json_io::member(j, "value", at), at.field("value"));
  m.tc_id = json_io::read_small_int(json_io::member(j, "tcId", at), at.field("tcId"));
  const JsonValue element = json_io::member(j, "element", at);
  if (!element.is_null()) m.element = read_count(element, at.field("element"));
  m.format = read_format_name(json_io::member(j, "format", at), at.field("format"));
  m.position = read_optional_position(json_io::member(j, "position", at), at.field("position"));
  return m;
}

Json failure_json(const Failure& f) {
  return {{"group", f.group}, {"groupComment", f.group_comment}, {"tcId", f.tc_id},
          {"format", std::string(to_string(f.format))}, {"message", f.message}};
}

Failure read_failure(const JsonValue& j, const Location& at) {
  json_io::require_only(j, {"group", "groupComment", "tcId", "format", "message"}, at);
  Failure f;
  f.group = read_count(json_io::member(j, "group", at), at.field("group"));
  f.group_comment = json_io::read_string(json_io::member(j, "groupComment", at), at.field("groupComment"));
  f.tc_id = json_io::read_small_int(json_io::member(j, "tcId", at), at.field("tcId"));
  f.format = read_format_name(json_io::member(j, "format", at), at.field("format"));
  f.message = json_io::read_string(json_io::member(j, "message", at), at.field("message"));
  return f;
}

// Objects keyed by format name.
template <class Read>
void read_by_format(const JsonValue& o, const Location& at, Read read) {
  json_io::require_object(o, at);
  for (const auto& [name, value] : o.members()) {
    const std::string key(name);
    read(parse_format_name(key, at), value, at.field(key));
  }
}

constexpr const char* kEndFailure = "failure";
constexpr const char* kEndLastJudged = "lastJudgedPosition";

Json accurate_contexts_json(const std::map<Format, AccurateContext>& contexts) {
  Json out = Json::object();
  for (const auto& [f, c] : contexts) {
    out[std::string(to_string(f))] = {{"upTo", optional_json(c.up_to)},
                                      {"end", c.end() == AccurateContext::End::failure ? kEndFailure : kEndLastJudged},
                                      {"failsAt", optional_json(c.fails_at)},
                                      {"boundVacuous", c.bound_vacuous}};
  }
  return out;
}

AccurateContext read_accurate_context(const JsonValue& j, const Location& at) {
  json_io::require_only(j, {"upTo", "end", "failsAt", "boundVacuous"}, at);
  AccurateContext c;
  c.up_to = read_optional_position(json_io::member(j, "upTo", at), at.field("upTo"));
  c.fails_at = read_optional_position(json_io::member(j, "failsAt", at), at.field("failsAt"));
  c.bound_vacuous = read_count(json_io::member(j, "boundVacuous", at), at.field("boundVacuous"));
  const std::string end = json_io::read_string(json_io::member(j, "end", at), at.field("end"));
  if (end != kEndFailure && end != kEndLastJudged) {
    at.field("end").fail("'" + end + "' is not one of " + kEndFailure + ", " + kEndLastJudged);
  }
  // One meaning: it ends at a failure exactly when there is one, and below it.
  if ((end == kEndFailure) != c.fails_at.has_value()) at.field("end").fail("'" + end + "' disagrees with failsAt");
  if (!c.up_to && !c.fails_at) at.field("upTo").fail("null, though nothing failed");
  if (c.up_to && c.fails_at && !(*c.up_to < *c.fails_at)) at.field("upTo").fail("not below failsAt");
  if (!c.up_to && c.bound_vacuous != 0) at.field("boundVacuous").fail("counts checks below no position");
  return c;
}

std::map<Format, AccurateContext> read_accurate_contexts(const JsonValue& j, const Location& at) {
  std::map<Format, AccurateContext> out;
  read_by_format(j, at, [&](Format f, const JsonValue& v, const Location& where) { out[f] = read_accurate_context(v, where); });
  return out;
}

// The run's context must be what its groups' say together, as far as they tell: the first
// failure anywhere; without one, the last judged position of all and at least the vacuous checks
// each counts (the run's also counts those between a group's end and its own).
void check_overall_context(const RunReport& r, const Location& at) {
  std::map<Format, std::vector<const AccurateContext*>> per_format;
  for (const auto& f : r.files) {
    for (const auto& [format, c] : f.accurate_context) per_format[format].push_back(&c);
  }
  for (const auto& [format, contexts] : per_format) {
    if (!r.accurate_context.count(format)) at.field(std::string(to_string(format))).fail("missing, though groups have it");
  }
  for (const auto& [format, c] : r.accurate_context) {
    const Location where = at.field(std::string(to_string(format)));
    const auto it = per_format.find(format);
    if (it == per_format.end()) where.fail("no group has an accurate context in this format");
    std::optional<double> fails_at, up_to;
    std::int64_t vacuous = 0;
    for (const AccurateContext* g : it->second) {
      if (g->fails_at && (!fails_at || *g->fails_at < *fails_at)) fails_at = g->fails_at;
    }
    for (const AccurateContext* g : it->second) {
      if (g->up_to && (!fails_at || *g->up_to < *fails_at) && (!up_to || *g->up_to > *up_to)) up_to = g->up_to;
      vacuous += g->bound_vacuous;
    }
    if (c.fails_at != fails_at) where.field("failsAt").fail("disagrees with the groups' first failure");
    // A group's context below the first failure is judged and passing: the run's reaches it.
    if (up_to && (!c.up_to || *c.up_to < *up_to)) where.field("upTo").fail("below a group's accurate context");
    if (!fails_at && (c.up_to != up_to || c.bound_vacuous < vacuous)) {
      where.fail("disagrees with the groups' last judged position and vacuous checks");
    }
  }
}

Json part_counts_json(const PartCounts& c) {
  Json judged = Json::object(), not_judged = Json::object();
  for (const auto& [f, n] : c.judged) {
    Json counts = {{"passed", n.passed}, {"failed", n.failed}};
    if (n.without_lse > 0) counts["withoutL"] = n.without_lse;
    judged[std::string(to_string(f))] = std::move(counts);
  }
  for (const auto& [why, by_format] : c.not_judged) {
    Json formats = Json::object();
    for (const auto& [f, n] : by_format) formats[std::string(to_string(f))] = n;
    not_judged[std::string(json_name(why))] = std::move(formats);
  }
  return {{"judged", std::move(judged)}, {"notJudged", std::move(not_judged)}};
}

NotJudged read_not_judged_name(const std::string& name, const Location& at) {
  for (NotJudged why : kAllNotJudged) {
    if (name == json_name(why)) return why;
  }
  at.fail("'" + name + "' is not one of noEntryPoint, refused, notRepresentable, boundVacuous, beyondMaxPosition");
}

PartCounts read_part_counts(const JsonValue& j, const Location& at) {
  json_io::require_only(j, {"judged", "notJudged"}, at);
  PartCounts c;
  read_by_format(json_io::member(j, "judged", at), at.field("judged"), [&](Format f, const JsonValue& v, const Location& where) {
    json_io::require_only(v, {"passed", "failed", "withoutL"}, where);
    Counts& n = c.judged[f];
    n.passed = read_count(json_io::member(v, "passed", where), where.field("passed"));
    n.failed = read_count(json_io::member(v, "failed", where), where.field("failed"));
    if (const auto without = json_io::optional_member(v, "withoutL")) {
      n.without_lse = read_count(*without, where.field("withoutL"));
      if (n.without_lse > n.passed + n.failed) where.field("withoutL").fail("more than the checks judged");
    }
  });
  const JsonValue not_judged = json_io::member(j, "notJudged", at);
  json_io::require_object(not_judged, at.field("notJudged"));
  for (const auto& [name, by_format] : not_judged.members()) {
    const Location where = at.field("notJudged").field(std::string(name));
    const NotJudged why = read_not_judged_name(std::string(name), where);
    read_by_format(by_format, where, [&](Format f, const JsonValue& v, const Location& count_at) {
      c.not_judged[why][f] = read_count(v, count_at);
    });
  }
  return c;
}

Json verdict_json(const RunReport& r) {
  Json v = Json::object();
  for (Part p : kAllParts) {
    const PartVerdict part = r.verdict(p);
    v[std::string(to_string(p))] = {{"checked", part.checked}, {"conformant", part.conformant()}, {"reasons", part.reasons}};
  }
  v["coverage"] = r.coverage_gaps();
  return v;
}

Json summary_json(const RunReport& r) {
  Json not_judged = Json::object();
  PartCounts all = r.part_counts(Part::accuracy);
  all.add(r.part_counts(Part::validation));
  for (NotJudged why : kAllNotJudged) not_judged[std::string(json_name(why))] = all.not_judged_for(why);
  return {{"passed", r.passed()},
          {"failed", r.failed()},
          {"notJudged", std::move(not_judged)},
          {"accuracy", part_counts_json(r.part_counts(Part::accuracy))},
          {"validation", part_counts_json(r.part_counts(Part::validation))}};
}

PositionError read_position_error(const JsonValue& j, const Location& at) {
  json_io::require_only(j, {"position", "format", "worstScaled", "bound", "worstMargin"}, at);
  PositionError e;
  e.position = read_error_value(json_io::member(j, "position", at), at.field("position"));
  if (std::isinf(e.position)) at.field("position").fail("expected a finite position");
  e.format = read_format_name(json_io::member(j, "format", at), at.field("format"));
  e.worst_scaled = read_error_value(json_io::member(j, "worstScaled", at), at.field("worstScaled"));
  e.bound = read_error_value(json_io::member(j, "bound", at), at.field("bound"));
  e.worst_margin = read_error_value(json_io::member(j, "worstMargin", at), at.field("worstMargin"));
  return e;
}

FileResult read_group(const JsonValue& j, const Location& at) {
  json_io::require_only(j,
                        {"file", "passed", "failed", "notJudged", "accuracy", "validation", "worstMargin",
                         "worstMarginByFormat", "accurateContext", "worstScaled", "worstUlp", "failures", "errorByPosition"},
                        at);
  FileResult r;
  r.path = json_io::read_string(json_io::member(j, "file", at), at.field("file"));
  r.accuracy = read_part_counts(json_io::member(j, "accuracy", at), at.field("accuracy"));
  r.validation = read_part_counts(json_io::member(j, "validation", at), at.field("validation"));
  // The totals are there for readers; they must be what the parts add up to.
  for (const auto& [key, value] : {std::pair{"passed", r.passed()}, {"failed", r.failed()}, {"notJudged", r.not_judged()}}) {
    if (read_count(json_io::member(j, key, at), at.field(key)) != value) {
      at.field(key).fail("disagrees with the sum of accuracy and validation (" + std::to_string(value) + ")");
    }
  }
  r.worst_margin = read_margin(json_io::member(j, "worstMargin", at), at.field("worstMargin"));
  auto by_format = [&](const char* key, auto read) { read_by_format(json_io::member(j, key, at), at.field(key), read); };
  by_format("worstMarginByFormat", [&](Format f, const JsonValue& v, const Location& where) {
    r.margin_by_format[f] = read_margin(v, where);
    if (r.margin_by_format[f].format != f) where.field("format").fail("differs from its key");
  });
  r.accurate_context = read_accurate_contexts(json_io::member(j, "accurateContext", at), at.field("accurateContext"));
  r.worst_scaled = read_worst(json_io::member(j, "worstScaled", at), at.field("worstScaled"));
  r.worst_ulp = read_worst(json_io::member(j, "worstUlp", at), at.field("worstUlp"));
  // A margin above 1 is a failed check: a group edited to hide its failures is refused.
  if (r.failed() == 0 && r.worst_margin.value > 1) at.field("worstMargin").fail("above 1 in a group without failures");
  const auto failures = json_io::array_elements(json_io::member(j, "failures", at), at.field("failures"));
  for (std::size_t i = 0; i < failures.size(); ++i) r.failures.push_back(read_failure(failures[i], at.field("failures").index(i)));
  if (static_cast<std::int64_t>(r.failures.size()) != r.failed()) {
    at.field("failures").fail("lists " + std::to_string(r.failures.size()) + " failures, the group counts " +
                              std::to_string(r.failed()));
  }
  const auto points = json_io::array_elements(json_io::member(j, "errorByPosition", at), at.field("errorByPosition"));
  for (std::size_t i = 0; i < points.size(); ++i) {
    r.by_position.push_back(read_position_error(points[i], at.field("errorByPosition").index(i)));
    if (r.failed() == 0 && r.by_position.back().worst_margin > 1) {
      at.field("errorByPosition").index(i).field("worstMargin").fail("above 1 in a group without failures");
    }
  }
  return r;
}

PropertyResult read_property(const JsonValue& j, const Location& at) {
  json_io::require_only(j, {"name", "format", "status", "cases", "counterexample"}, at);
  PropertyResult p;
  p.name = json_io::read_string(json_io::member(j, "name", at), at.field("name"));
  p.format = read_format_name(json_io::member(j, "format", at), at.field("format"));
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
  // Every storage format's working format, declared or default: standard's bounds depend on it.
  Json working = Json::object();
  for (Format f : kAllFormats) working[std::string(to_string(f))] = std::string(to_string(report.tolerance.working_format(f)));
  j["workingFormats"] = std::move(working);
  // Attention's roundings: the storage formats that have one, and its format.
  for (const auto& [key, formats] : {std::pair{"scoreFormats", &report.tolerance.score},
                                     {"probabilityFormats", &report.tolerance.probability}}) {
    Json rounded = Json::object();
    for (const auto& [f, r] : *formats) {
      if (r) rounded[std::string(to_string(f))] = std::string(to_string(*r));
    }
    j[key] = std::move(rounded);
  }
  j["replay"] = report.replay;
  Json checks = Json::array(), asked_formats = Json::array();
  for (Part p : report.checks) checks.push_back(std::string(to_string(p)));
  for (Format f : report.asked_formats) asked_formats.push_back(std::string(to_string(f)));
  j["checks"] = std::move(checks);
  j["asked"] = {{"formats", std::move(asked_formats)}, {"files", report.files_asked}};
  j["conformant"] = report.conformant();
  j["verdict"] = verdict_json(report);
  j["summary"] = summary_json(report);
  j["accurateContext"] = accurate_contexts_json(report.accurate_context);
  j["groups"] = Json::array();
  for (const auto& f : report.files) {
    Json points = Json::array();
    for (const auto& e : f.by_position) {
      points.push_back({{"position", e.position},
                        {"format", std::string(to_string(e.format))},
                        {"worstScaled", error_value(e.worst_scaled)},
                        {"bound", e.bound},
                        {"worstMargin", error_value(e.worst_margin)}});
    }
    Json failures = Json::array();
    for (const auto& failure : f.failures) failures.push_back(failure_json(failure));
    Json margins = Json::object();
    for (const auto& [format, m] : f.margin_by_format) margins[std::string(to_string(format))] = margin_json(m);
    j["groups"].push_back({{"file", f.path},
                           {"passed", f.passed()},
                           {"failed", f.failed()},
                           {"notJudged", f.not_judged()},
                           {"accuracy", part_counts_json(f.accuracy)},
                           {"validation", part_counts_json(f.validation)},
                           {"worstMargin", margin_json(f.worst_margin)},
                           {"worstMarginByFormat", std::move(margins)},
                           {"accurateContext", accurate_contexts_json(f.accurate_context)},
                           {"worstScaled", worst_json(f.worst_scaled)},
                           {"worstUlp", worst_json(f.worst_ulp)},
                           {"failures", std::move(failures)},
                           {"errorByPosition", std::move(points)}});
  }
  j["properties"] = Json::array();
  for (const auto& p : report.properties) {
    j["properties"].push_back(
        {{"name", p.name}, {"format", std::string(to_string(p.format))}, {"status", p.status}, {"cases", p.cases}, {"counterexample", p.counterexample}});
  }
  return j.dump(2) + "\n";
}

RunReport parse_report_json(const std::string& text, const std::string& source) {
  const json_io::JsonDocument parsed(text, source);
  const JsonValue j = parsed.root();
  const Location at{&source, std::nullopt, ""};
  json_io::require_only(j, {"schema", "implementation", "profile", "scaledBound", "workingFormats", "scoreFormats",
                            "probabilityFormats", "replay", "checks", "asked", "conformant", "verdict", "summary",
                            "accurateContext", "groups", "properties"},
                        at);
  const std::string schema = json_io::read_string(json_io::member(j, "schema", at), at.field("schema"));
  if (schema != kSchema) {
    at.field("schema").fail("unknown report schema '" + schema + "' (this posenc reads " + kSchema + ")");
  }
  RunReport r;
  r.implementation = json_io::read_string(json_io::member(j, "implementation", at), at.field("implementation"));
  const std::string profile = json_io::read_string(json_io::member(j, "profile", at), at.field("profile"));
  if (profile == "explicit") {
    const JsonValue b = json_io::member(j, "scaledBound", at);
    r.tolerance.scaled_bound = read_error_value(b, at.field("scaledBound"));
  } else {
    try {
      r.tolerance.profile = parse_profile(profile);
    } catch (const Error&) {
      at.field("profile").fail("'" + profile + "' is not one of exact, strict, standard, explicit");
    }
  }
  const JsonValue working = json_io::member(j, "workingFormats", at);
  if (!working.is_object() || working.size() != std::size(kAllFormats)) {
    at.field("workingFormats").fail("expected an object with one working format for each of f64, f32, bf16, f16");
  }
  for (Format f : kAllFormats) {
    const Location where = at.field("workingFormats").field(std::string(to_string(f)));
    const Format w = read_format_name(json_io::member(working, std::string(to_string(f)), at.field("workingFormats")), where);
    if (w != Format::f32 && w != Format::f64) where.fail("'" + std::string(to_string(w)) + "' is not f32 or f64");
    r.tolerance.working[f] = w;
  }
  for (const auto& [key, formats] : {std::pair{"scoreFormats", &r.tolerance.score},
                                     {"probabilityFormats", &r.tolerance.probability}}) {
    read_by_format(json_io::member(j, key, at), at.field(key), [&](Format f, const JsonValue& v, const Location& where) {
      (*formats)[f] = read_format_name(v, where);
    });
  }
  r.replay = json_io::read_string(json_io::member(j, "replay", at), at.field("replay"));
  const auto checks = json_io::array_elements(json_io::member(j, "checks", at), at.field("checks"));
  r.checks.clear();
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const Location where = at.field("checks").index(i);
    const std::string name = json_io::read_string(checks[i], where);
    try {
      r.checks.push_back(parse_part(name, "checks"));
    } catch (const Error&) {
      where.fail("'" + name + "' is not one of accuracy, validation, properties");
    }
  }
  const JsonValue asked = json_io::member(j, "asked", at);
  json_io::require_only(asked, {"formats", "files"}, at.field("asked"));
  const auto formats = json_io::array_elements(json_io::member(asked, "formats", at.field("asked")), at.field("asked").field("formats"));
  for (std::size_t i = 0; i < formats.size(); ++i) {
    r.asked_formats.push_back(read_format_name(formats[i], at.field("asked").field("formats").index(i)));
  }
  r.files_asked = json_io::read_bool(json_io::member(asked, "files", at.field("asked")), at.field("asked").field("files"));
  const auto groups = json_io::array_elements(json_io::member(j, "groups", at), at.field("groups"));
  for (std::size_t i = 0; i < groups.size(); ++i) r.files.push_back(read_group(groups[i], at.field("groups").index(i)));
  r.accurate_context = read_accurate_contexts(json_io::member(j, "accurateContext", at), at.field("accurateContext"));
  check_overall_context(r, at.field("accurateContext"));
  const auto properties = json_io::array_elements(json_io::member(j, "properties", at), at.field("properties"));
  for (std::size_t i = 0; i < properties.size(); ++i) {
    r.properties.push_back(read_property(properties[i], at.field("properties").index(i)));
  }
  // The stored verdict and counts must be the ones the groups add up to: a report edited to say
  // "conformant" over failing groups is refused.
  const bool conformant = json_io::read_bool(json_io::member(j, "conformant", at), at.field("conformant"));
  if (conformant != r.conformant()) at.field("conformant").fail("disagrees with the groups and properties it reports");
  // The verdict's parts and the summary are what the groups and properties say, recomputed.
  if (Json::parse(json_io::member(j, "verdict", at).text()) != verdict_json(r)) {
    at.field("verdict").fail("disagrees with the groups and properties it reports (recomputed: " + verdict_json(r).dump() + ")");
  }
  if (Json::parse(json_io::member(j, "summary", at).text()) != summary_json(r)) {
    at.field("summary").fail("disagrees with the sum over the groups (recomputed: " + summary_json(r).dump() + ")");
  }
  return r;
}

}  // namespace posenc::conformance
