#include "serve_session.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include "serve_verdict.hpp"
#include "text_io.hpp"
#include "posenc/adapters/result_entry.hpp"
#include "posenc/judge/file_selection.hpp"
#include "posenc/models/hf_rope_dict.hpp"
#include "posenc/reports/html.hpp"
#include "posenc/reports/json.hpp"
#include "posenc/reports/junit.hpp"
#include "posenc/reports/text.hpp"
#include "posenc/vectors/group_json.hpp"
#include "posenc/vectors/json_writer.hpp"

namespace posenc::cli {

using conformance::json_io::Json;
using conformance::json_io::JsonValue;
using conformance::json_io::Location;
namespace jio = conformance::json_io;

ServeSession::ServeSession(const ConformOptions& o, const std::string& implementation)
    : hf_folder_(o.hf_config ? std::make_unique<TemporaryFolder>() : nullptr),
      o_(o.hf_config ? with_hf_config_vectors(o, *hf_folder_) : o),
      options_(run_options(o_, false)),
      submitted_(implementation + " (posenc serve)") {
  parse_max_failures(o_);
  manifest_ = conformance::read_checked_manifest(options_.vectors, options_.manifest_sha256);
  conformance::select_files(manifest_, options_.filter, options_.exclude);  // a pattern matching nothing is refused now
}

namespace {

std::vector<std::string> strings_of(const JsonValue& request, const char* key, const Location& at) {
  return jio::read_string_array(jio::member(request, key, at), at.field(key));
}

// A RoPE group's parameters as a Hugging Face-style config too (models/hf_rope_dict.hpp), for
// code that builds its rotary embedding from one; or why a config cannot say them.
void add_hf_rope_config(Json& group, const RopeParams& p) {
  try {
    group["hfRopeConfig"] = models::hf_rope_config(p);
  } catch (const InvalidParameter& e) {
    group["hfRopeConfigError"] = e.what();
  }
}

// An attention case's inputs inline (SPEC.md section 10), flat in the tensors' row-major order:
// a vector file keeps them in its safetensors file (section 4), but a client of the protocol
// reads JSON alone. With `expected`, O then L correctly rounded to each format, as for the other
// families.
void add_attention_tensors(Json& test, const conformance::VectorGroup& g, const conformance::VectorCase& c,
                           bool with_expected) {
  const conformance::AttentionData& a = c.attention;
  test["queryPositions"] = jio::decimal_int_array(a.query_positions);
  test["keyPositions"] = jio::decimal_int_array(a.key_positions);
  test["q"] = jio::hex_double_array(a.q);
  test["k"] = jio::hex_double_array(a.k);
  test["v"] = jio::hex_double_array(a.v);
  const auto& p = std::get<AttentionParams>(g.params);
  if (p.mask == AttentionMask::explicit_) test["mask"] = a.mask;
  if (p.rope_table_given) test["table"] = jio::hex_double_array(a.table);
  if (!with_expected || !c.valid) return;
  Json expected{{"exact", c.expected.exact}};
  for (Format f : kAllFormats) {
    Json values = Json::array();
    for (auto bits : c.expected.of(f)) values.push_back(hex_float(f, bits));
    expected[std::string(to_string(f))] = std::move(values);
  }
  test["expected"] = std::move(expected);
}

// Attention's roundings as the session answers them: the storage formats that have one.
Json rounding_formats(const std::map<Format, std::optional<Format>>& formats) {
  Json out = Json::object();
  for (const auto& [f, r] : formats) {
    if (r) out[std::string(to_string(f))] = to_string(*r);
  }
  return out;
}

std::string format_names(const std::vector<Format>& formats) {
  std::string s;
  for (Format f : formats) s += (s.empty() ? "" : ",") + std::string(to_string(f));
  return s;
}

}  // namespace

conformance::RunOptions ServeSession::options_for(const JsonValue& request) const {
  ConformOptions o = o_;
  const Location at{&request_name_, std::nullopt, ""};
  if (jio::optional_member(request, "filter")) o.filter = strings_of(request, "filter", at);
  if (jio::optional_member(request, "exclude")) o.exclude = strings_of(request, "exclude", at);
  if (jio::optional_member(request, "formats")) {
    const auto formats = strings_of(request, "formats", at);
    o.formats.reset();
    for (const auto& f : formats) o.formats = (o.formats ? *o.formats + "," : "") + f;
  }
  return run_options(o, false);
}

std::vector<Format> ServeSession::judged_in(const conformance::VectorGroup& g, const conformance::VectorCase& c,
                                            const conformance::RunOptions& options) const {
  std::vector<Format> out;
  if (!(c.valid ? options.accuracy : options.validation)) return out;
  for (Format f : options.formats) {
    if (!conformance::excluded_by_run(options, g, c, f)) out.push_back(f);
  }
  return out;
}

const ServeSession::Loaded& ServeSession::load(const std::string& path) {
  if (const auto it = files_.find(path); it != files_.end()) return it->second;
  const auto entry = std::find_if(manifest_.begin(), manifest_.end(), [&](const auto& m) { return m.path == path; });
  if (entry == manifest_.end()) {
    throw InvalidParameter("file", "'" + path + "'", "a vector file of the MANIFEST (a path below vectors/, e.g. rope/none.json)");
  }
  Loaded l{conformance::load_listed_file(options_.vectors, *entry), {}};
  for (std::size_t gi = 0; gi < l.file.groups.size(); ++gi) {
    const auto& tests = l.file.groups[gi].tests;
    for (std::size_t ci = 0; ci < tests.size(); ++ci) l.by_tc_id[tests[ci].tc_id] = {gi, ci};
  }
  return files_.emplace(path, std::move(l)).first->second;
}

Json ServeSession::describe() const {
  Json formats = Json::array();
  for (Format f : options_.formats) formats.push_back(to_string(f));
  Json working = Json::object();
  for (Format f : kAllFormats) working[std::string(to_string(f))] = to_string(options_.tolerance.working_format(f));
  return Json{{"protocol", 1},
              {"vectors", options_.vectors.string()},
              {"profile", to_string(options_.tolerance.profile)},
              {"bound", options_.tolerance.scaled_bound ? Json(*options_.tolerance.scaled_bound) : Json(nullptr)},
              {"formats", formats},
              {"workingFormats", working},
              {"scoreFormats", rounding_formats(options_.tolerance.score)},
              {"probabilityFormats", rounding_formats(options_.tolerance.probability)},
              {"files", manifest_.size()}};
}

void ServeSession::cases(const JsonValue& request, std::ostream& out) {
  const auto options = options_for(request);
  const auto valid = jio::optional_member(request, "valid");  // true, false, or absent: both
  const Location at{&request_name_, std::nullopt, ""};
  // -1: every case; 0: the invalid ones; 1: the valid ones. (An int: GCC 12 warns falsely on an
  // optional<bool> here.)
  const int want_valid = valid ? static_cast<int>(jio::read_bool(*valid, at.field("valid"))) : -1;
  // "expected": true also sends each valid case's correct roundings (for measuring one's own error).
  const auto expected = jio::optional_member(request, "expected");
  const bool with_expected = expected && jio::read_bool(*expected, at.field("expected"));
  std::int64_t files = 0, cases = 0;
  // One line per file: the protocol's batch, so a session costs a message per file, not per case.
  for (const auto& m : conformance::select_files(manifest_, options.filter, options.exclude)) {
    const Loaded& l = load(m.path);
    Json groups = Json::array();
    for (std::size_t gi = 0; gi < l.file.groups.size(); ++gi) {
      const auto& g = l.file.groups[gi];
      Json jg = jio::group_header_json(g);
      jg["group"] = gi;
      if (const auto* rope = std::get_if<RopeParams>(&g.params)) add_hf_rope_config(jg, *rope);
      if (const auto* a = std::get_if<AttentionParams>(&g.params); a && a->rope) add_hf_rope_config(jg, *a->rope);
      Json tests = Json::array();
      for (const auto& c : g.tests) {
        if (want_valid >= 0 && c.valid != (want_valid == 1)) continue;
        Json jc = jio::case_to_json(g.type, c, with_expected);
        if (g.type == conformance::CaseType::attention) add_attention_tensors(jc, g, c, with_expected);
        Json formats = Json::array();
        for (Format f : judged_in(g, c, options)) formats.push_back(to_string(f));
        jc["formats"] = std::move(formats);
        jc["outputs"] = c.valid ? c.expected.size() : 0;
        tests.push_back(std::move(jc));
        ++cases;
      }
      jg["tests"] = std::move(tests);
      groups.push_back(std::move(jg));
    }
    out << Json{{"file", m.path}, {"groups", std::move(groups)}}.dump() << "\n";
    ++files;
  }
  out << Json{{"end", "cases"}, {"files", files}, {"cases", cases}}.dump() << "\n";
}

Json ServeSession::judge(const JsonValue& request) {
  const Location at{&request_name_, std::nullopt, ""};
  const std::string path = jio::read_string(jio::member(request, "file", at), at.field("file"));
  const std::string format = jio::read_string(jio::member(request, "format", at), at.field("format"));
  const Format f = parse_format(format);
  const auto elements_member = jio::optional_member(request, "elements");
  const bool elements = elements_member && jio::read_bool(*elements_member, at.field("elements"));
  // "verdicts": false keeps the outputs for finish without judging each now (the batch route).
  const auto verdicts_member = jio::optional_member(request, "verdicts");
  const bool want_verdicts = !verdicts_member || jio::read_bool(*verdicts_member, at.field("verdicts"));
  if (std::find(options_.formats.begin(), options_.formats.end(), f) == options_.formats.end()) {
    throw InvalidParameter("format", "'" + format + "'", "one of the session's formats (" + format_names(options_.formats) + ")");
  }
  const Loaded& l = load(path);
  const auto results = jio::array_elements(jio::member(request, "results", at), at.field("results"));
  // Every entry is checked before any is kept, so a refused request leaves the session as it was.
  std::vector<std::tuple<const conformance::VectorGroup*, const conformance::VectorCase*, conformance::Outcome>> checked;
  const std::string source = path + " (judge request, format " + format + ")";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Location entry{&source, std::nullopt, "results[" + std::to_string(i) + "]"};
    jio::require_only(results[i], {"tcId", "status", "values"}, entry);
    const std::int64_t tc_id = jio::read_small_int(jio::member(results[i], "tcId", entry), entry.field("tcId"));
    const auto it = l.by_tc_id.find(tc_id);
    if (it == l.by_tc_id.end()) entry.field("tcId").fail(path + " has no case with tcId " + std::to_string(tc_id));
    const auto& g = l.file.groups[it->second.first];
    const auto& c = g.tests[it->second.second];
    const Location at_case{&source, tc_id, entry.path};
    const auto formats = judged_in(g, c, options_);
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) {
      at_case.fail("not judged in " + format + " in this session (it is judged in: " +
                   (formats.empty() ? std::string("none") : format_names(formats)) + ")");
    }
    // As in a results file (SPEC.md section 7).
    conformance::Outcome o = conformance::read_result_outcome(
        results[i], f, at_case, c.valid ? conformance::accepted_value_counts(g, c) : std::vector<std::size_t>{});
    checked.emplace_back(&g, &c, std::move(o));
  }
  Json verdicts = Json::array();
  for (auto& [g, c, o] : checked) {
    if (want_verdicts) verdicts.push_back(serve_verdict(*g, *c, o, f, options_.tolerance, elements));
    submitted_.submit(path, c->tc_id, f, std::move(o));
  }
  if (!want_verdicts) return Json{{"file", path}, {"format", format}, {"submitted", checked.size()}};
  return Json{{"file", path}, {"format", format}, {"verdicts", std::move(verdicts)}};
}

Json ServeSession::finish(const JsonValue& request) {
  const auto options = options_for(request);
  auto report = conformance::run_vectors(submitted_, options);
  report.replay = replay_command("posenc serve", o_, false);
  std::ostringstream summary;
  conformance::print_summary(summary, report, static_cast<std::size_t>(parse_max_failures(o_)));
  const std::string json = conformance::report_json(report);
  if (o_.report) write_text(*o_.report, json);
  if (o_.junit) write_text(*o_.junit, conformance::junit_xml(report));
  if (o_.html) write_text(*o_.html, conformance::html_report({report}));
  finished_ = true;
  status_ = report.conformant() ? 0 : 1;
  return Json{{"summary", summary.str()}, {"conformant", report.conformant()}, {"report", Json::parse(json)}};
}

void ServeSession::handle(const std::string& line, std::ostream& out) {
  try {
    std::optional<jio::JsonDocument> document;
    try {
      document.emplace(line, request_name_);
    } catch (const conformance::VectorFileError& e) {
      throw InvalidParameter("request", "'" + line.substr(0, 80) + "'", std::string("one JSON object per line (") + e.what() + ")");
    }
    const JsonValue request = document->root();
    const Location at{&request_name_, std::nullopt, ""};
    jio::require_object(request, at);
    const std::string op = jio::read_string(jio::member(request, "op", at), at.field("op"));
    if (op == "session") {
      jio::require_only(request, {"op"}, at);
      out << describe().dump() << "\n";
    } else if (op == "cases") {
      jio::require_only(request, {"op", "filter", "exclude", "formats", "valid", "expected"}, at);
      cases(request, out);
    } else if (op == "judge") {
      jio::require_only(request, {"op", "file", "format", "results", "elements", "verdicts"}, at);
      out << judge(request).dump() << "\n";
    } else if (op == "finish") {
      jio::require_only(request, {"op", "filter", "exclude", "formats"}, at);
      out << finish(request).dump() << "\n";
    } else {
      at.field("op").fail("'" + op + "': expected session, cases, judge or finish");
    }
  } catch (const Error& e) {  // a bad request is answered, and the session goes on
    out << Json{{"error", e.what()}}.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  }
  out.flush();
}

}  // namespace posenc::cli
