#include "params_json.hpp"

namespace posenc::conformance::json_io {
namespace {

Json to_json(const SinusoidalParams& p) {
  return Json{{"d_model", p.d_model}, {"base", hex_double(p.base)}, {"layout", to_string(p.layout)},
              {"frequencies", to_string(p.frequencies)}};
}

Json to_json(const RopeScaling& s) {
  Json j{{"kind", to_string(s.kind)}};
  auto real = [&](const char* key, const std::optional<double>& v) {
    if (v) j[key] = hex_double(*v);
  };
  auto integer = [&](const char* key, const std::optional<std::int64_t>& v) {
    if (v) j[key] = decimal_int(*v);
  };
  real("factor", s.factor);
  integer("original_max_positions", s.original_max_positions);
  integer("seq_len", s.seq_len);
  real("beta_fast", s.beta_fast);
  real("beta_slow", s.beta_slow);
  if (s.truncate) j["truncate"] = *s.truncate;
  real("mscale", s.mscale);
  real("mscale_all_dim", s.mscale_all_dim);
  real("attention_factor", s.attention_factor);
  real("low_freq_factor", s.low_freq_factor);
  real("high_freq_factor", s.high_freq_factor);
  if (!s.short_factor.empty()) j["short_factor"] = hex_double_array(s.short_factor);
  if (!s.long_factor.empty()) j["long_factor"] = hex_double_array(s.long_factor);
  return j;
}

Json to_json(const RopeParams& p) {
  Json j{{"head_dim", p.head_dim}, {"rotary_dim", p.rotary_dim}, {"base", hex_double(p.base)},
         {"layout", to_string(p.layout)}, {"partial", to_string(p.partial)}, {"inverse", p.inverse}};
  if (!p.mrope_section.empty()) j["mrope_section"] = p.mrope_section;
  j["scaling"] = to_json(p.scaling);
  return j;
}

Json to_json(const AlibiParams& p) { return Json{{"n_heads", p.n_heads}, {"mode", to_string(p.mode)}}; }

Json to_json(const LearnedParams& p) { return Json{{"max_positions", p.max_positions}, {"dim", p.dim}}; }

Json to_json(const AttentionParams& p) {
  Json j{{"head_dim", p.head_dim}, {"value_dim", p.value_dim}, {"query_heads", p.query_heads},
         {"kv_heads", p.kv_heads}, {"mask", to_string(p.mask)}};
  if (p.rope) j["rope"] = to_json(*p.rope);
  if (p.rope_table_given) j["rope_table_given"] = true;
  if (p.alibi) j["alibi"] = to_json(*p.alibi);
  if (p.scale) j["scale"] = hex_double(*p.scale);
  if (p.scale_denominator) j["scale_denominator"] = hex_double(*p.scale_denominator);
  if (p.scale_mscale_all_dim) j["scale_mscale_all_dim"] = hex_double(*p.scale_mscale_all_dim);
  return j;
}

// Enum names are parsed by the parameter definitions; their InvalidParameter becomes a file error.
template <class F>
auto parse_name(const JsonValue& j, const Location& at, F parse) {
  std::string s = read_string(j, at);
  try {
    return parse(s);
  } catch (const InvalidParameter& e) {
    at.fail(e.what());
  }
}

SinusoidalParams sinusoidal_from(const JsonValue& j, const Location& at) {
  require_only(j, {"d_model", "base", "layout", "frequencies"}, at);
  SinusoidalParams p;
  p.d_model = read_small_int(member(j, "d_model", at), at.field("d_model"));
  p.base = read_hex_double(member(j, "base", at), at.field("base"));
  p.layout = parse_name(member(j, "layout", at), at.field("layout"), parse_sinusoidal_layout);
  p.frequencies = parse_name(member(j, "frequencies", at), at.field("frequencies"), parse_sinusoidal_frequencies);
  return p;
}

RopeScaling scaling_from(const JsonValue& j, const Location& at) {
  require_only(j, {"kind", "factor", "original_max_positions", "seq_len", "beta_fast", "beta_slow", "truncate",
                   "mscale", "mscale_all_dim", "attention_factor", "low_freq_factor", "high_freq_factor",
                   "short_factor", "long_factor"},
               at);
  RopeScaling s;
  s.kind = parse_name(member(j, "kind", at), at.field("kind"), parse_rope_scaling_kind);
  auto real = [&](const char* key, std::optional<double>& v) {
    if (auto m = optional_member(j, key)) v = read_hex_double(*m, at.field(key));
  };
  auto integer = [&](const char* key, std::optional<std::int64_t>& v) {
    if (auto m = optional_member(j, key)) v = read_decimal_int(*m, at.field(key));
  };
  real("factor", s.factor);
  integer("original_max_positions", s.original_max_positions);
  integer("seq_len", s.seq_len);
  real("beta_fast", s.beta_fast);
  real("beta_slow", s.beta_slow);
  if (auto m = optional_member(j, "truncate")) s.truncate = read_bool(*m, at.field("truncate"));
  real("mscale", s.mscale);
  real("mscale_all_dim", s.mscale_all_dim);
  real("attention_factor", s.attention_factor);
  real("low_freq_factor", s.low_freq_factor);
  real("high_freq_factor", s.high_freq_factor);
  if (auto m = optional_member(j, "short_factor")) s.short_factor = read_hex_double_array(*m, at.field("short_factor"));
  if (auto m = optional_member(j, "long_factor")) s.long_factor = read_hex_double_array(*m, at.field("long_factor"));
  return s;
}

RopeParams rope_from(const JsonValue& j, const Location& at) {
  require_only(j, {"head_dim", "rotary_dim", "base", "layout", "partial", "inverse", "mrope_section", "scaling"}, at);
  RopeParams p;
  p.head_dim = read_small_int(member(j, "head_dim", at), at.field("head_dim"));
  p.rotary_dim = read_small_int(member(j, "rotary_dim", at), at.field("rotary_dim"));
  p.base = read_hex_double(member(j, "base", at), at.field("base"));
  p.layout = parse_name(member(j, "layout", at), at.field("layout"), parse_rope_layout);
  p.partial = parse_name(member(j, "partial", at), at.field("partial"), parse_partial_rotary);
  p.inverse = read_bool(member(j, "inverse", at), at.field("inverse"));
  if (auto m = optional_member(j, "mrope_section")) {
    const Location sections = at.field("mrope_section");
    std::size_t i = 0;
    for (const JsonValue& v : array_elements(*m, sections)) p.mrope_section.push_back(read_small_int(v, Where(sections, i++)));
  }
  p.scaling = scaling_from(member(j, "scaling", at), at.field("scaling"));
  return p;
}

AlibiParams alibi_from(const JsonValue& j, const Location& at) {
  require_only(j, {"n_heads", "mode"}, at);
  AlibiParams p;
  p.n_heads = read_small_int(member(j, "n_heads", at), at.field("n_heads"));
  p.mode = parse_name(member(j, "mode", at), at.field("mode"), parse_alibi_mode);
  return p;
}

LearnedParams learned_from(const JsonValue& j, const Location& at) {
  require_only(j, {"max_positions", "dim"}, at);
  LearnedParams p;
  p.max_positions = read_small_int(member(j, "max_positions", at), at.field("max_positions"));
  p.dim = read_small_int(member(j, "dim", at), at.field("dim"));
  return p;
}

AttentionParams attention_from(const JsonValue& j, const Location& at) {
  require_only(j, {"head_dim", "value_dim", "query_heads", "kv_heads", "mask", "rope", "rope_table_given", "alibi",
                   "scale", "scale_denominator", "scale_mscale_all_dim"},
               at);
  AttentionParams p;
  p.head_dim = read_small_int(member(j, "head_dim", at), at.field("head_dim"));
  p.value_dim = read_small_int(member(j, "value_dim", at), at.field("value_dim"));
  p.query_heads = read_small_int(member(j, "query_heads", at), at.field("query_heads"));
  p.kv_heads = read_small_int(member(j, "kv_heads", at), at.field("kv_heads"));
  p.mask = parse_name(member(j, "mask", at), at.field("mask"), parse_attention_mask);
  if (auto m = optional_member(j, "rope")) p.rope = rope_from(*m, at.field("rope"));
  if (auto m = optional_member(j, "rope_table_given")) p.rope_table_given = read_bool(*m, at.field("rope_table_given"));
  if (auto m = optional_member(j, "alibi")) p.alibi = alibi_from(*m, at.field("alibi"));
  auto real = [&](const char* key, std::optional<double>& v) {
    if (auto m = optional_member(j, key)) v = read_hex_double(*m, at.field(key));
  };
  real("scale", p.scale);
  real("scale_denominator", p.scale_denominator);
  real("scale_mscale_all_dim", p.scale_mscale_all_dim);
  return p;
}

}  // namespace

Json params_to_json(const Params& p) {
  return std::visit([](const auto& v) { return to_json(v); }, p);
}

Params params_from_json(CaseType type, const JsonValue& j, const Location& at) {
  const std::string_view family = family_of(type);
  if (family == "sinusoidal") return sinusoidal_from(j, at);
  if (family == "rope") return rope_from(j, at);
  if (family == "alibi") return alibi_from(j, at);
  if (family == "attention") return attention_from(j, at);
  return learned_from(j, at);
}

}  // namespace posenc::conformance::json_io
