#include "posenc/vectors/vector_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
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
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/tensor_file.hpp"

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
    case PositionInput::tensors:
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
  if (t.positions == PositionInput::tensors) {
    j["queries"] = c.attention.queries;
    j["keys"] = c.attention.keys;
  }
  if (!c.valid) {
    j["result"] = "invalid";
    j["error"] = c.error;
    return j;
  }
  j["result"] = "valid";
  // A tensor case's expected values are in the tensor file.
  if (!with_expected || t.positions == PositionInput::tensors) return j;
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
    case PositionInput::tensors:
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
  if (t.positions == PositionInput::tensors) {
    c.attention.queries = read_small_int(field("queries"), at.field("queries"));
    c.attention.keys = read_small_int(field("keys"), at.field("keys"));
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
  if (t.positions == PositionInput::tensors) {
    if (optional_member(j, "expected")) at.field("expected").fail("a tensor case's expected values are in its tensor file");
    return c;
  }
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

// The narrowest of bf16, f16, f32, f64 that holds every value exactly (the tensor's dtype).
Format narrowest_exact(std::span<const double> values) {
  for (Format f : {Format::bf16, Format::f16, Format::f32}) {
    if (std::all_of(values.begin(), values.end(), [f](double v) { return exact_bits(f, v).has_value(); })) return f;
  }
  return Format::f64;
}

std::string tensor_name(const VectorCase& c, const char* what) { return "tc" + std::to_string(c.tc_id) + "." + what; }

// An attention case's tensors (SPEC.md section 4), shaped as AttentionInputs says when their
// sizes fit the parameters (an invalid case's may not: then flat).
void put_attention_tensors(TensorFile& t, const VectorGroup& g, const VectorCase& c) {
  const auto& p = std::get<AttentionParams>(g.params);
  const AttentionData& a = c.attention;
  auto shape = [](std::size_t size, std::vector<std::int64_t> dims) {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return n == static_cast<std::int64_t>(size) ? dims : std::vector<std::int64_t>{static_cast<std::int64_t>(size)};
  };
  auto put = [&](const char* what, const std::vector<double>& v, std::vector<std::int64_t> dims) {
    t.put_values(tensor_name(c, what), narrowest_exact(v), shape(v.size(), std::move(dims)), v);
  };
  const std::int64_t axes = p.position_axes();
  t.put_ints(tensor_name(c, "query_positions"), shape(a.query_positions.size(), {a.queries, axes}), a.query_positions);
  t.put_ints(tensor_name(c, "key_positions"), shape(a.key_positions.size(), {a.keys, axes}), a.key_positions);
  put("q", a.q, {a.queries, p.query_heads, p.head_dim});
  put("k", a.k, {a.keys, p.kv_heads, p.head_dim});
  put("v", a.v, {a.keys, p.kv_heads, p.value_dim});
  if (p.mask == AttentionMask::explicit_) t.put_bytes(tensor_name(c, "mask"), shape(a.mask.size(), {a.queries, a.keys}), a.mask);
  if (p.rope_table_given) {
    put("table", a.table, {a.queries + a.keys, 2 * (p.rope ? p.rope->pair_count() : 0)});
  }
  if (!c.valid) return;
  const auto n = static_cast<std::int64_t>(c.expected.size());
  for (Format f : kAllFormats) t.put_bits(tensor_name(c, std::string(to_string(f)).c_str()), f, {n}, c.expected.of(f));
  std::vector<double> residual;
  for (std::size_t i = 0; i < c.expected.size(); ++i) {
    residual.push_back(residual_of(c.expected.exact[i], to_double(Format::f64, c.expected.of(Format::f64)[i])));
  }
  t.put_values(tensor_name(c, "residual"), Format::f64, {n}, residual);
  t.put_values(tensor_name(c, "kappa"), Format::f64, {a.queries, p.query_heads, p.value_dim}, a.kappa);
  t.put_values(tensor_name(c, "pv"), Format::f64, {a.queries, p.query_heads, p.value_dim}, a.pv);
  t.put_values(tensor_name(c, "logit_range"), Format::f64, {a.queries, p.query_heads}, a.logit_range);
}

void read_attention_tensors(const TensorFile& t, const VectorGroup& g, VectorCase& c) {
  const auto& p = std::get<AttentionParams>(g.params);
  AttentionData& a = c.attention;
  a.query_positions = t.flat_ints(tensor_name(c, "query_positions"));
  a.key_positions = t.flat_ints(tensor_name(c, "key_positions"));
  a.q = t.flat_values(tensor_name(c, "q"));
  a.k = t.flat_values(tensor_name(c, "k"));
  a.v = t.flat_values(tensor_name(c, "v"));
  if (p.mask == AttentionMask::explicit_) a.mask = t.flat_bytes(tensor_name(c, "mask"));
  if (p.rope_table_given) a.table = t.flat_values(tensor_name(c, "table"));
  if (!c.valid) return;
  const std::int64_t n = attention_outputs(p, a.queries);
  for (Format f : kAllFormats) c.expected.bits[static_cast<std::size_t>(f)] = t.bits(tensor_name(c, std::string(to_string(f)).c_str()), f, {n});
  const auto residual = t.values(tensor_name(c, "residual"), {n});
  const auto& f64 = c.expected.of(Format::f64);
  c.expected.exact.clear();
  for (std::size_t i = 0; i < f64.size(); ++i) c.expected.exact.push_back(exact_of(to_double(Format::f64, f64[i]), residual[i]));
  a.kappa = t.values(tensor_name(c, "kappa"), {a.queries, p.query_heads, p.value_dim});
  a.pv = t.values(tensor_name(c, "pv"), {a.queries, p.query_heads, p.value_dim});
  a.logit_range = t.values(tensor_name(c, "logit_range"), {a.queries, p.query_heads});
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

std::string write_tensor_file(const VectorFile& file) {
  if (!file.has_tensors()) return "";
  TensorFile t;
  for (const auto& g : file.groups) {
    for (const auto& c : g.tests) put_attention_tensors(t, g, c);
  }
  return t.write();
}

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
  if (file.has_tensors()) {
    j["tensors"] = Json{{"file", file.tensors_name()}, {"sha256", sha256_hex(write_tensor_file(file))}};
  }
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

VectorFile parse_vector_file(const std::string& text, const std::string& name, const TensorReader& read_tensors) {
  const Location at{&name, std::nullopt, ""};
  const JsonDocument document(text, name);
  const JsonValue j = document.root();
  require_only(j,
               {"family", "variant", "schema", "version", "generator", "seed", "numberOfTests", "notes", "tensors",
                "testGroups"},
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
  std::optional<TensorFile> tensors;
  if (f.has_tensors()) {
    const Location at_tensors = at.field("tensors");
    const JsonValue jt = member(j, "tensors", at);
    require_only(jt, {"file", "sha256"}, at_tensors);
    f.tensors = read_string(member(jt, "file", at_tensors), at_tensors.field("file"));
    f.tensors_sha256 = read_string(member(jt, "sha256", at_tensors), at_tensors.field("sha256"));
    if (f.tensors != f.tensors_name()) at_tensors.field("file").fail("expected '" + f.tensors_name() + "'");
    if (!read_tensors) at_tensors.fail("the tensor file " + f.tensors + " was not given to the reader");
    const std::string bytes = read_tensors(f.tensors);
    if (sha256_hex(bytes) != f.tensors_sha256) {
      at_tensors.field("sha256").fail(f.tensors + ": SHA-256 differs (modified or truncated; refused)");
    }
    tensors = TensorFile::parse(bytes, f.tensors);
  } else if (optional_member(j, "tensors")) {
    at.field("tensors").fail("a " + f.family + " file has no tensor file");
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
      if (tensors) read_attention_tensors(*tensors, g, c);
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
  return parse_vector_file(read_bytes(path), path.string(), tensors_beside(path));
}

TensorReader tensors_beside(const std::filesystem::path& json) {
  return [folder = json.parent_path()](const std::string& file) { return read_bytes(folder / file); };
}

}  // namespace posenc::conformance
