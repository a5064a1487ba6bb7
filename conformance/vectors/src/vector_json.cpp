#include "posenc/vectors/vector_json.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <set>
#include <span>
#include <sstream>

#include "params_json.hpp"
#include "posenc/vectors/case_types.hpp"
#include "posenc/vectors/group_json.hpp"
#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/json_writer.hpp"

namespace posenc::conformance {

using json_io::Json;
using json_io::Location;

namespace json_io {

Json case_to_json(CaseType type, const VectorCase& c, bool with_expected) {
  Json j{{"tcId", c.tc_id}, {"comment", c.comment}, {"flags", c.flags}};
  const CaseTypeInfo& t = info(type);
  switch (t.positions) {
    case PositionInput::none:
      break;
    case PositionInput::one:
      j["position"] = decimal_int(c.position.at(0));
      break;
    case PositionInput::per_axis:
      j["position"] = decimal_int_array(c.position);
      break;
    case PositionInput::two:
      j["positions"] = decimal_int_array({c.position.at(0), c.position_b.at(0)});
      break;
    case PositionInput::sides:
      j["qPosition"] = decimal_int_array(c.position);
      j["kPosition"] = decimal_int_array(c.position_b);
      break;
  }
  if (t.x && t.positions == PositionInput::sides) {
    j["q"] = hex_double_array(c.x);
    j["k"] = hex_double_array(c.y);
  } else if (t.x) {
    j["x"] = hex_double_array(c.x);
  }
  if (t.alibi_indices) {
    j["head"] = c.head;
    j["queryPosition"] = decimal_int(c.query);
    j["keyPosition"] = decimal_int(c.key);
  }
  if (!c.valid) {
    j["result"] = "invalid";
    j["error"] = c.error;
    return j;
  }
  j["result"] = "valid";
  if (!with_expected) return j;
  Json expected{{"exact", c.expected.exact}};
  for (Format f : kAllFormats) {
    Json values = Json::array();
    for (auto bits : c.expected.of(f)) values.push_back(hex_float(f, bits));
    expected[std::string(to_string(f))] = std::move(values);
  }
  j["expected"] = std::move(expected);
  return j;
}

Json group_header_json(const VectorGroup& g) {
  Json jg{{"type", to_string(g.type)}, {"comment", g.comment}, {"params", params_to_json(g.params)},
          {"inputFormat", to_string(g.input_format)}};
  if (info(g.type).table) jg["table"] = hex_double_array(g.table);
  return jg;
}

}  // namespace json_io

namespace {

using namespace json_io;

VectorCase case_from_json(CaseType type, const JsonValue& j, const Location& at_group) {
  VectorCase c;
  require_object(j, at_group);
  c.tc_id = read_small_int(member(j, "tcId", at_group), at_group.field("tcId"));
  const Location at{at_group.file, c.tc_id, ""};
  // The fields every case has, then those its type reads (a fixed array: a set per case is a
  // measurable part of reading a file).
  std::array<std::string_view, 12> allowed{"tcId", "comment", "flags", "result", "error", "expected"};
  std::size_t n_allowed = 6;
  c.comment = read_string(member(j, "comment", at), at.field("comment"));
  c.flags = read_string_array(member(j, "flags", at), at.field("flags"));
  auto field = [&](const char* key) {
    allowed.at(n_allowed++) = key;
    return member(j, key, at);
  };
  const CaseTypeInfo& t = info(type);
  switch (t.positions) {
    case PositionInput::none:
      break;
    case PositionInput::one:
      c.position = {read_decimal_int(field("position"), at.field("position"))};
      break;
    case PositionInput::per_axis:
      c.position = read_decimal_int_array(field("position"), at.field("position"));
      break;
    case PositionInput::two: {
      auto positions = read_decimal_int_array(field("positions"), at.field("positions"));
      if (positions.size() != 2) at.field("positions").fail("expected two positions");
      c.position = {positions[0]};
      c.position_b = {positions[1]};
      break;
    }
    case PositionInput::sides:
      c.position = read_decimal_int_array(field("qPosition"), at.field("qPosition"));
      c.position_b = read_decimal_int_array(field("kPosition"), at.field("kPosition"));
      break;
  }
  if (t.x && t.positions == PositionInput::sides) {
    c.x = read_hex_double_array(field("q"), at.field("q"), t.nan_inputs);
    c.y = read_hex_double_array(field("k"), at.field("k"), t.nan_inputs);
  } else if (t.x) {
    c.x = read_hex_double_array(field("x"), at.field("x"), t.nan_inputs);
  }
  if (t.alibi_indices) {
    c.head = read_small_int(field("head"), at.field("head"));
    c.query = read_decimal_int(field("queryPosition"), at.field("queryPosition"));
    c.key = read_decimal_int(field("keyPosition"), at.field("keyPosition"));
  }
  require_only(j, std::span<const std::string_view>(allowed.data(), n_allowed), at,
               "unknown field for a " + std::string(to_string(type)) + " case");
  const std::string result = read_string(member(j, "result", at), at.field("result"));
  if (result == "invalid") {
    c.valid = false;
    c.error = read_string(member(j, "error", at), at.field("error"));
    if (optional_member(j, "expected")) at.field("expected").fail("an invalid case has no expected values");
    return c;
  }
  if (result != "valid") at.field("result").fail("expected 'valid' or 'invalid', got '" + result + "'");
  if (optional_member(j, "error")) at.field("error").fail("a valid case has no error");
  const JsonValue expected = member(j, "expected", at);
  const Location at_expected = at.field("expected");
  require_only(expected, {"exact", "f64", "f32", "bf16", "f16"}, at_expected);
  c.expected.exact = read_string_array(member(expected, "exact", at_expected), at_expected.field("exact"));
  for (Format f : kAllFormats) {
    const std::string name(to_string(f));
    const Location at_values = at_expected.field(name);
    const auto values = array_elements(member(expected, name, at_expected), at_values);
    if (values.size() != c.expected.exact.size()) {
      at_values.fail("has " + std::to_string(values.size()) + " values, 'exact' has " +
                     std::to_string(c.expected.exact.size()));
    }
    auto& bits = c.expected.bits[static_cast<std::size_t>(f)];
    for (std::size_t i = 0; i < values.size(); ++i) bits.push_back(read_format_bits(values[i], f, Where(at_values, i)));
  }
  return c;
}

// Like Json::dump(1), but an array of scalars (a case's inputs, its expected values) on one line:
// a file still reads a case at a time, at about three quarters of the bytes (SPEC.md section 4).
void write_json(const Json& j, std::size_t depth, std::string& out) {
  const bool nested = std::any_of(j.begin(), j.end(), [](const Json& v) { return v.is_structured(); });
  if (j.empty() || !j.is_structured()) {
    out += j.dump();
  } else if (j.is_array() && !nested) {
    out += "[";
    for (std::size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + j[i].dump();
    out += "]";
  } else {
    const std::string pad(depth + 1, ' ');
    out += j.is_object() ? "{\n" : "[\n";
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      out += (first ? "" : ",\n") + pad;
      if (j.is_object()) out += Json(it.key()).dump() + ": ";
      write_json(*it, depth + 1, out);
      first = false;
    }
    out += "\n" + std::string(depth, ' ') + (j.is_object() ? "}" : "]");
  }
}

}  // namespace

std::string write_vector_file(const VectorFile& file) {
  Json j;
  j["family"] = file.family;
  j["variant"] = file.variant;
  j["schema"] = file.schema();
  j["version"] = file.version;
  j["generator"] = file.generator;
  j["seed"] = decimal_int(static_cast<std::int64_t>(file.seed));
  j["numberOfTests"] = file.number_of_tests();
  j["notes"] = file.notes;
  Json groups = Json::array();
  for (const auto& g : file.groups) {
    Json jg = group_header_json(g);
    Json tests = Json::array();
    for (const auto& c : g.tests) tests.push_back(case_to_json(g.type, c, true));
    jg["tests"] = std::move(tests);
    groups.push_back(std::move(jg));
  }
  j["testGroups"] = std::move(groups);
  std::string out;
  write_json(j, 0, out);
  return out + "\n";
}

VectorFile parse_vector_file(const std::string& text, const std::string& name) {
  const Location at{&name, std::nullopt, ""};
  const JsonDocument document(text, name);
  const JsonValue j = document.root();
  require_only(j, {"family", "variant", "schema", "version", "generator", "seed", "numberOfTests", "notes", "testGroups"},
               at);
  VectorFile f;
  f.family = read_string(member(j, "family", at), at.field("family"));
  f.variant = read_string(member(j, "variant", at), at.field("variant"));
  f.version = static_cast<int>(read_small_int(member(j, "version", at), at.field("version")));
  if (f.version != kVectorFormatVersion) {
    at.field("version").fail("unsupported version " + std::to_string(f.version) + " (this posenc reads version " +
                             std::to_string(kVectorFormatVersion) + ")");
  }
  if (read_string(member(j, "schema", at), at.field("schema")) != f.schema()) {
    at.field("schema").fail("expected '" + f.schema() + "'");
  }
  f.generator = read_string(member(j, "generator", at), at.field("generator"));
  f.seed = static_cast<std::uint64_t>(read_decimal_int(member(j, "seed", at), at.field("seed")));
  const JsonValue notes = member(j, "notes", at);
  require_object(notes, at.field("notes"));
  for (const auto& [flag, meaning] : notes.members()) {
    const std::string key(flag);
    if (f.notes.count(key)) at.field("notes").field(key).fail("appears twice");
    f.notes[key] = read_string(meaning, at.field("notes").field(key));
  }
  const auto groups = array_elements(member(j, "testGroups", at), at.field("testGroups"));
  std::set<std::int64_t> ids;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Location ag = at.field("testGroups").index(gi);
    const JsonValue& jg = groups[gi];
    require_only(jg, {"type", "comment", "params", "inputFormat", "table", "tests"}, ag);
    VectorGroup g;
    const std::string type = read_string(member(jg, "type", ag), ag.field("type"));
    try {
      g.type = parse_case_type(type);
    } catch (const InvalidParameter&) {
      ag.field("type").fail("unknown test group type '" + type + "'");
    }
    if (family_of(g.type) != f.family) ag.field("type").fail("'" + type + "' is not a " + f.family + " type");
    g.comment = read_string(member(jg, "comment", ag), ag.field("comment"));
    g.params = json_io::params_from_json(g.type, member(jg, "params", ag), ag.field("params"));
    const std::string input_format = read_string(member(jg, "inputFormat", ag), ag.field("inputFormat"));
    try {
      g.input_format = parse_format(input_format);
    } catch (const InvalidParameter& e) {
      ag.field("inputFormat").fail(e.what());
    }
    if (info(g.type).table) g.table = read_hex_double_array(member(jg, "table", ag), ag.field("table"));
    const auto tests = array_elements(member(jg, "tests", ag), ag.field("tests"));
    for (std::size_t ti = 0; ti < tests.size(); ++ti) {
      VectorCase c = case_from_json(g.type, tests[ti], ag.field("tests").index(ti));
      if (!ids.insert(c.tc_id).second) {
        Location{&name, c.tc_id, "tcId"}.fail("duplicate tcId");
      }
      g.tests.push_back(std::move(c));
    }
    f.groups.push_back(std::move(g));
  }
  const std::int64_t declared = read_small_int(member(j, "numberOfTests", at), at.field("numberOfTests"));
  if (declared != f.number_of_tests()) {
    at.field("numberOfTests").fail("declares " + std::to_string(declared) + " tests, the file has " +
                                   std::to_string(f.number_of_tests()));
  }
  return f;
}

VectorFile load_vector_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw VectorFileError(path.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_vector_file(text.str(), path.string());
}

}  // namespace posenc::conformance
