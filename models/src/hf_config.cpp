// Hugging Face config.json -> RopeParams. "HF" below is transformers' modeling_rope_utils.py
// (standardize_rope_params, _validate_*_rope_parameters, _compute_*_parameters); the model files
// are named where a family's RoPE differs. docs/hf_configs.md is the table of this mapping.
#include "posenc/models/hf_config.hpp"

#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "config_section.hpp"
#include "model_types.hpp"
#include "posenc/errors.hpp"

namespace posenc::models {
namespace {

using nlohmann::json;

enum class Family {
  llama,     // rotate_half (modeling_llama and the models copied from it): half layout
  gptj,      // modeling_gptj: rotate_every_two (interleaved), rotary_dim, base 10000
  gpt_neox,  // modeling_gpt_neox: rotate_half over rotary_pct of the head, rotary_emb_base
  deepseek,  // modeling_deepseek_v2/v3: RoPE on qk_rope_head_dim, interleaved pairs
};

Family family_of(const std::string& model_type) {
  // modeling_codegen's rotary embedding is GPT-J's (create_sinusoidal_positions, rotate_every_two).
  if (model_type == "gptj" || model_type == "codegen") return Family::gptj;
  if (model_type == "gpt_neox") return Family::gpt_neox;
  if (model_type == "deepseek_v2" || model_type == "deepseek_v3" || model_type == "kimi_k2") return Family::deepseek;
  return Family::llama;
}

// The attribute_map pairs of a registry entry ("alias=key;alias=key").
std::vector<std::pair<std::string, std::string>> attribute_pairs(const char* map) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view rest = map;
  while (!rest.empty()) {
    const auto end = rest.find(';');
    const std::string_view pair = rest.substr(0, end);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos) out.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  return out;
}

// Where each posenc parameter came from, so that a validation error names the config key.
using Origins = std::map<std::string, std::string>;

std::int64_t positive(ConfigSection& s, const std::string& key, std::int64_t v) {
  if (v < 1) s.fail(key, "an integer >= 1");
  return v;
}

// hidden / heads, as HF's `config.hidden_size // config.num_attention_heads`; a remainder is an
// error (the model's q/k projections could not be split into heads of that size).
std::int64_t split_heads(ConfigSection& top, const std::string& width_key, const std::string& heads_key) {
  auto width = top.integer(width_key);
  auto heads = top.integer(heads_key);
  if (!width) top.fail(width_key, "set (an integer >= 1): the head size is " + width_key + " / " + heads_key);
  if (!heads) top.fail(heads_key, "set (an integer >= 1): the head size is " + width_key + " / " + heads_key);
  positive(top, width_key, *width);
  positive(top, heads_key, *heads);
  if (*width % *heads != 0) {
    top.fail(width_key, "a multiple of " + top.spelling(heads_key) + " (" + std::to_string(*heads) + ")");
  }
  return *width / *heads;
}

// One value that may be given in two places (an old and a new key, or the top level and the RoPE
// dict): both may be given only when equal.
template <class T>
std::optional<T> one_of(ConfigSection& a, const std::string& key_a, std::optional<T> va, ConfigSection& b,
                        const std::string& key_b, std::optional<T> vb, std::string& origin) {
  if (va && vb && *va != *vb) {
    throw InvalidParameter(a.name(key_a), a.spelled(key_a),
                           "equal to " + b.name(key_b) + " (" + b.spelled(key_b) + ") when both are given");
  }
  if (va) {
    origin = a.name(key_a);
    return va;
  }
  if (vb) origin = b.name(key_b);
  return vb;
}

struct Reader {
  ConfigSection top;
  std::optional<ConfigSection> rope;  // rope_scaling / rope_parameters, when given
  std::string rope_key;              // its key, for messages
  HfRopeConfig out;
  Origins origins;
  Family family = Family::llama;
  const ModelTypeEntry* entry = nullptr;  // the model type's registry entry (model_types.hpp)

  // The RoPE dict: rope_scaling (transformers 4.x) or rope_parameters (5.x); both only if equal
  // (HF convert_rope_params_to_dict takes rope_scaling first). Gemma-3-style per-layer dicts
  // ({"full_attention": {...}, "sliding_attention": {...}}): the full-attention layers' RoPE.
  void find_rope_dict() {
    const json* scaling = top.object("rope_scaling");
    const json* parameters = top.object("rope_parameters");
    if (scaling && parameters && *scaling != *parameters) {
      top.fail("rope_scaling", "absent, or equal to rope_parameters, when rope_parameters is given");
    }
    const json* d = scaling ? scaling : parameters;
    rope_key = scaling ? "rope_scaling" : "rope_parameters";
    if (!d) return;
    const std::string prefix = top.path(rope_key) + ".";
    auto layer = d->find("full_attention");
    if (layer != d->end() && layer->is_object()) {
      for (const auto& [k, v] : d->items()) {
        if (k != "full_attention") {
          out.unread.push_back(prefix + k + " = " + v.dump() +
                               ": another layer type's RoPE; posenc reads the full-attention layers'");
        }
      }
      rope.emplace(*layer, prefix + "full_attention.");
      return;
    }
    rope.emplace(*d, prefix);
  }

  void read_head() {
    RopeParams& p = out.params;
    switch (family) {
      case Family::gptj: {
        // modeling_gptj: head_dim = n_embd / n_head; RoPE on the first rotary_dim dims, pairs
        // (2i, 2i+1) (rotate_every_two), base 10000 (create_sinusoidal_positions).
        p.head_dim = split_heads(top, "n_embd", "n_head");
        origins["rope.head_dim"] = top.name("n_embd");
        auto r = top.integer("rotary_dim");
        if (!r) {
          top.fail("rotary_dim", "an even integer in [2, n_embd / n_head] (null, the whole embedding, is not a "
                                 "per-head RoPE)");
        }
        p.rotary_dim = *r;
        origins["rope.rotary_dim"] = top.name("rotary_dim");
        p.base = 10000.0;
        p.layout = RopeLayout::interleaved;
        if (auto n = top.integer("n_positions")) out.max_position_embeddings = positive(top, "n_positions", *n);
        return;
      }
      case Family::deepseek: {
        // modeling_deepseek_v3: the rotary embedding acts on q_pe/k_pe, qk_rope_head_dim wide;
        // rope_interleave (default true) applies it to interleaved pairs
        // (apply_rotary_pos_emb_interleave). DeepSeek-V2's apply_rotary_emb pairs (2i, 2i+1).
        auto d = top.integer("qk_rope_head_dim");
        if (!d) top.fail("qk_rope_head_dim", "set: the RoPE part of DeepSeek's heads");
        p.head_dim = p.rotary_dim = *d;
        origins["rope.head_dim"] = origins["rope.rotary_dim"] = top.name("qk_rope_head_dim");
        const bool interleave = out.model_type == "deepseek_v2" ? true : top.boolean("rope_interleave").value_or(true);
        p.layout = interleave ? RopeLayout::interleaved : RopeLayout::half;
        top.mark_read("head_dim");  // HF sets head_dim = qk_rope_head_dim for the rotary embedding
        break;
      }
      default:
        // HF: getattr(config, "head_dim", None) or hidden_size // num_attention_heads.
        if (auto h = top.integer("head_dim")) {
          p.head_dim = positive(top, "head_dim", *h);
          origins["rope.head_dim"] = top.name("head_dim");
          top.mark_read("hidden_size");
          top.mark_read("num_attention_heads");
        } else {
          p.head_dim = split_heads(top, "hidden_size", "num_attention_heads");
          origins["rope.head_dim"] = top.name("hidden_size");
        }
        // The layout and direction measured on the model's own code (model_types.inc), else
        // rotate_half's.
        p.layout = entry ? entry->layout : RopeLayout::half;
        p.inverse = entry && entry->backward;
        // The layout key hf_rope_config writes for interleaved parameters (no model_type).
        if (out.model_type.empty() && top.boolean("rope_interleave").value_or(false)) {
          p.layout = RopeLayout::interleaved;
        }
        break;
    }
    if (auto n = top.integer("max_position_embeddings")) {
      out.max_position_embeddings = positive(top, "max_position_embeddings", *n);
    }
  }

  // rope_theta: in the RoPE dict or at the top level (HF standardize_rope_params: setdefault),
  // default 10000 (RotaryEmbeddingConfigMixin.default_theta). GPT-NeoX's old key rotary_emb_base.
  void read_theta() {
    std::string origin = "hf_config.rope_theta";
    std::optional<double> theta;
    ConfigSection& r = rope ? *rope : top;
    theta = one_of(r, "rope_theta", rope ? r.real("rope_theta") : std::nullopt, top, "rope_theta",
                   top.real("rope_theta"), origin);
    if (family == Family::gpt_neox) {
      theta = one_of(top, "rotary_emb_base", top.real("rotary_emb_base"), top, "rope_theta", theta, origin);
    }
    if (theta) {
      out.params.base = *theta;
    } else if (entry) {
      // A saved config.json omits a value at its class default (save_pretrained's diff).
      out.params.base = entry->default_theta;
      origin = "hf_config.model_type (" + out.model_type + "'s default rope_theta)";
    }
    origins["rope.base"] = origin;
  }

  // partial_rotary_factor (dict or top level; GPT-NeoX's rotary_pct, default 0.25): HF's
  // dim = int(head_dim * partial_rotary_factor), the truncation as HF writes it.
  double read_partial() {
    std::string origin = "hf_config.partial_rotary_factor";
    ConfigSection& r = rope ? *rope : top;
    auto f = one_of(r, "partial_rotary_factor", rope ? r.real("partial_rotary_factor") : std::nullopt, top,
                    "partial_rotary_factor", top.real("partial_rotary_factor"), origin);
    if (family == Family::gpt_neox) {
      // configuration_gpt_neox: rotary_pct = 0.25 by default.
      f = one_of(top, "rotary_pct", top.real("rotary_pct"), top, "partial_rotary_factor", f, origin);
      if (!f) {
        f = 0.25;
        origin = "hf_config.rotary_pct";
      }
    }
    if (!f && entry && entry->default_partial_rotary_factor != 1.0) {
      f = entry->default_partial_rotary_factor;  // the class default a saved config.json omits
      origin = "hf_config.model_type (" + out.model_type + "'s default partial_rotary_factor)";
    }
    origins["rope.rotary_dim"] = origin;
    if (!f) return 1.0;
    if (!(*f > 0.0 && *f <= 1.0)) throw InvalidParameter(origin, json(*f).dump(), "in (0, 1]");
    return *f;
  }

  std::int64_t original_length(const std::string& kind) {
    // HF standardize_rope_params, for llama3, yarn and longrope: the top-level
    // original_max_position_embeddings first (Phi-3 keeps it there), else the dict's, else
    // max_position_embeddings.
    auto inner = rope->integer("original_max_position_embeddings");
    if (auto outer = top.integer("original_max_position_embeddings")) {
      if (inner && *inner != *outer) {
        out.unread.push_back(rope_key + ".original_max_position_embeddings = " + std::to_string(*inner) +
                             ": transformers uses the top-level original_max_position_embeddings (" +
                             std::to_string(*outer) + ") instead");
      }
      origins["rope.scaling.original_max_positions"] = top.name("original_max_position_embeddings");
      return *outer;
    }
    if (inner) {
      origins["rope.scaling.original_max_positions"] = rope->name("original_max_position_embeddings");
      return *inner;
    }
    if (out.max_position_embeddings == 0) {
      rope->fail("original_max_position_embeddings",
                 "set for rope_type '" + kind + "', or max_position_embeddings given (its default)");
    }
    origins["rope.scaling.original_max_positions"] = top.name("max_position_embeddings");
    return out.max_position_embeddings;
  }

  double required_real(const std::string& key, const std::string& kind) {
    auto v = rope->real(key);
    if (!v) rope->fail(key, "set for rope_type '" + kind + "'");
    return *v;
  }

  template <class T>
  void optional_field(const std::string& key, std::optional<T> value, std::optional<T>& field,
                      const std::string& posenc_name) {
    field = value;
    origins[posenc_name] = rope->name(key);
  }

  // rope_type (or the old `type`) and each type's fields (HF _validate_*_rope_parameters).
  void read_scaling(double& partial) {
    RopeParams& p = out.params;
    RopeScaling& s = p.scaling;
    if (!rope) return;
    auto type = rope->text("rope_type");
    auto old_type = rope->text("type");
    if (type && old_type && *type != *old_type) {
      rope->fail("type", "absent, or equal to rope_type ('" + *type + "')");
    }
    std::string kind = type ? *type : old_type.value_or("default");
    const std::string type_key = type ? "rope_type" : "type";
    origins["rope.scaling.kind"] = rope->name(type_key);
    // mrope_section (Qwen2-VL, modeling_qwen2_vl apply_multimodal_rotary_pos_emb): pair counts
    // per position axis. configuration_qwen2_vl turns type "mrope" into "default".
    p.mrope_section = rope->integers("mrope_section");
    origins["rope.mrope_section"] = rope->name("mrope_section");
    // Qwen3-VL's interleaved M-RoPE (modeling_qwen3_vl apply_interleaved_mrope) spreads each
    // axis over every third pair; posenc's sections are contiguous (Qwen2-VL): refused, not
    // read as the other.
    if (rope->boolean("mrope_interleaved").value_or(false)) {
      rope->fail("mrope_interleaved", "false or absent: posenc's M-RoPE sections are contiguous (Qwen2-VL)");
    }
    if (kind == "mrope") kind = "default";
    // configuration_phi3: the old LongRoPE name "su" (and "longrope") is LongRoPE.
    if (kind == "su") kind = "longrope";
    if (kind == "default") {
      s.kind = RopeScalingKind::none;
    } else if (kind == "linear") {
      s.kind = RopeScalingKind::linear;
      s.factor = required_real("factor", kind);
      origins["rope.scaling.factor"] = rope->name("factor");
    } else if (kind == "dynamic") {
      // HF _compute_dynamic_ntk_parameters: the original length is max_position_embeddings.
      s.kind = RopeScalingKind::dynamic;
      s.factor = required_real("factor", kind);
      origins["rope.scaling.factor"] = rope->name("factor");
      if (out.max_position_embeddings == 0) top.fail("max_position_embeddings", "set for rope_type 'dynamic'");
      s.original_max_positions = out.max_position_embeddings;
      origins["rope.scaling.original_max_positions"] = top.name("max_position_embeddings");
    } else if (kind == "yarn") {
      s.kind = RopeScalingKind::yarn;
      s.factor = required_real("factor", kind);
      origins["rope.scaling.factor"] = rope->name("factor");
      s.original_max_positions = original_length(kind);
      optional_field("beta_fast", rope->real("beta_fast"), s.beta_fast, "rope.scaling.beta_fast");
      optional_field("beta_slow", rope->real("beta_slow"), s.beta_slow, "rope.scaling.beta_slow");
      optional_field("mscale", rope->real("mscale"), s.mscale, "rope.scaling.mscale");
      optional_field("mscale_all_dim", rope->real("mscale_all_dim"), s.mscale_all_dim, "rope.scaling.mscale_all_dim");
      optional_field("attention_factor", rope->real("attention_factor"), s.attention_factor,
                     "rope.scaling.attention_factor");
      optional_field("truncate", rope->boolean("truncate"), s.truncate, "rope.scaling.truncate");
    } else if (kind == "llama3") {
      s.kind = RopeScalingKind::llama3;
      s.factor = required_real("factor", kind);
      origins["rope.scaling.factor"] = rope->name("factor");
      s.original_max_positions = original_length(kind);
      s.low_freq_factor = required_real("low_freq_factor", kind);
      origins["rope.scaling.low_freq_factor"] = rope->name("low_freq_factor");
      s.high_freq_factor = required_real("high_freq_factor", kind);
      origins["rope.scaling.high_freq_factor"] = rope->name("high_freq_factor");
    } else if (kind == "longrope") {
      s.kind = RopeScalingKind::longrope;
      s.original_max_positions = original_length(kind);
      // HF _compute_longrope_parameters: factor = max_position_embeddings / original when absent.
      if (auto f = rope->real("factor")) {
        s.factor = *f;
        origins["rope.scaling.factor"] = rope->name("factor");
      } else {
        if (out.max_position_embeddings == 0) {
          rope->fail("factor", "set for rope_type 'longrope', or max_position_embeddings given (factor = "
                               "max_position_embeddings / original_max_position_embeddings)");
        }
        s.factor = static_cast<double>(out.max_position_embeddings) / static_cast<double>(*s.original_max_positions);
        origins["rope.scaling.factor"] = top.name("max_position_embeddings");
      }
      optional_field("attention_factor", rope->real("attention_factor"), s.attention_factor,
                     "rope.scaling.attention_factor");
      for (const char* key : {"short_factor", "long_factor"}) {
        if (!rope->has(key)) rope->fail(key, "set for rope_type 'longrope' (a list of rotary_dim/2 numbers)");
      }
      s.short_factor = rope->reals("short_factor");
      origins["rope.scaling.short_factor"] = rope->name("short_factor");
      s.long_factor = rope->reals("long_factor");
      origins["rope.scaling.long_factor"] = rope->name("long_factor");
    } else if (kind == "proportional") {
      // HF _compute_proportional_rope_parameters (Gemma p-RoPE): exponent over head_dim,
      // int(partial_rotary_factor * head_dim // 2) rotated pairs, then inv_freq /= factor.
      p.partial = PartialRotary::proportional;
      if (auto f = rope->real("factor")) {
        s.kind = RopeScalingKind::linear;
        s.factor = *f;
        origins["rope.scaling.factor"] = rope->name("factor");
      }
      p.rotary_dim = 2 * static_cast<std::int64_t>(std::floor(partial * static_cast<double>(p.head_dim) / 2));
      partial = 0;  // rotary_dim set
    } else {
      rope->fail(type_key, "one of default, linear, dynamic, yarn, longrope (or su), llama3, proportional, mrope");
    }
  }

  // Llama 4 (configuration_llama4, modeling_llama4 Llama4TextAttention): no_rope_layers[i] = 1
  // for a layer that applies RoPE, 0 for one that applies none (by default every
  // no_rope_layer_interval-th layer); with attn_temperature_tuning, the queries of the no-RoPE
  // layers are multiplied by log1p(floor((i + 1) / floor_scale)) * attn_scale + 1 at token index i.
  // The RoPE vectors are those of the RoPE layers; the rest is reported per layer kind.
  void read_llama4_layer_kinds() {
    const auto layers = top.integer("num_hidden_layers").value_or(48);
    const auto interval = top.integer("no_rope_layer_interval").value_or(4);
    if (interval < 1) top.fail("no_rope_layer_interval", "an integer >= 1");
    std::vector<std::int64_t> uses_rope = top.integers("no_rope_layers");
    std::string source = top.path("no_rope_layers");
    if (uses_rope.empty()) {
      for (std::int64_t i = 0; i < layers; ++i) uses_rope.push_back((i + 1) % interval != 0 ? 1 : 0);
      source = "every " + top.path("no_rope_layer_interval") + " = " + std::to_string(interval) + "th of " +
               std::to_string(layers) + " layers (no " + top.path("no_rope_layers") + ")";
    }
    std::string nope;
    std::int64_t count = 0;
    for (std::size_t i = 0; i < uses_rope.size(); ++i) {
      if (uses_rope[i] != 0 && uses_rope[i] != 1) top.fail("no_rope_layers", "a list of 0 (no RoPE) and 1 (RoPE)");
      if (uses_rope[i] == 0) {
        nope += (count++ ? ", " : "") + std::to_string(i);
      }
    }
    const bool tuning = top.truthy("attn_temperature_tuning").value_or(true);
    const auto floor_scale = top.real("floor_scale").value_or(8192.0);
    const auto attn_scale = top.real("attn_scale").value_or(0.1);
    std::string note = "Llama 4 layer kinds (" + source + "): " + std::to_string(uses_rope.size() - count) + " of " +
                       std::to_string(uses_rope.size()) + " layers apply this RoPE (posenc's vectors are theirs); " +
                       std::to_string(count) + " apply none (NoPE: layers " + (count ? nope : "none") + ")";
    if (tuning && count) {
      note += ", whose queries attn_temperature_tuning multiplies by log1p(floor((i + 1) / floor_scale)) * attn_scale "
              "+ 1 at token index i (floor_scale " + json(floor_scale).dump() + ", attn_scale " +
              json(attn_scale).dump() + "): a query temperature posenc's vectors do not express";
    }
    out.unread.push_back(note);
  }

  void report_unread() {
    // Gemma 3 (modeling_gemma3): sliding-window layers use rope_local_base_freq, without scaling.
    auto relevant = [](const std::string& k) {
      return k.find("rope") != std::string::npos || k.find("rotary") != std::string::npos ||
             k == "partial_rotary_factor" || k == "head_dim";
    };
    for (auto& u : top.unread(relevant)) {
      if (u.starts_with("rope_local_base_freq") || u.starts_with("text_config.rope_local_base_freq")) {
        u += ": the sliding-window layers' base (Gemma 3); posenc reads the full-attention layers' RoPE";
      } else {
        u += ": not read by posenc for model_type '" + out.model_type + "'";
      }
      out.unread.push_back(u);
    }
    if (rope) {
      for (auto& u : rope->unread([](const std::string&) { return true; })) {
        // Ministral 3 and Mistral 4 (modeling_ministral3, get_llama_4_attn_scale): read by the
        // attention after RoPE, on the queries alone; transformers skips it in validation.
        if (u.find("llama_4_scaling_beta") != std::string::npos) {
          out.unread.push_back(u + ": the attention multiplies the queries after RoPE by 1 + llama_4_scaling_beta * "
                                   "ln(1 + floor(position / original_max_position_embeddings)) (get_llama_4_attn_scale): "
                                   "a query temperature posenc's vectors do not express");
          continue;
        }
        out.unread.push_back(u + ": not used by rope_type '" + std::string(to_string(out.params.scaling.kind)) +
                             "' (transformers warns 'Unrecognized keys')");
      }
    }
  }

  void validate_named() {
    RopeParams check = out.params;
    // seq_len is a forward's; any valid length checks the rest.
    if (out.needs_seq_len()) check.scaling.seq_len = check.scaling.original_max_positions;
    try {
      validate(check);
    } catch (const InvalidParameter& e) {
      // The longest posenc name that prefixes the error's (rope.mrope_section[1] -> mrope_section).
      std::string key;
      std::size_t best = 0;
      for (const auto& [name, origin] : origins) {
        if (e.parameter().starts_with(name) && name.size() > best) {
          best = name.size();
          key = origin;
        }
      }
      if (key.empty()) throw;
      throw InvalidParameter(key + " (posenc " + e.parameter() + ")", e.value(), e.allowed());
    }
  }
};

}  // namespace

bool HfRopeConfig::needs_seq_len() const {
  return params.scaling.kind == RopeScalingKind::dynamic || params.scaling.kind == RopeScalingKind::longrope;
}

HfRopeConfig read_hf_config(const json& config) {
  if (!config.is_object()) {
    throw InvalidParameter("hf_config", config.dump().substr(0, 40), "a JSON object (a config.json)");
  }
  // Multimodal configs (Qwen2.5-VL, Gemma 3, Llama 4, ...): the language model's config is
  // text_config (PretrainedConfig.get_text_config).
  auto text = config.find("text_config");
  const bool nested = text != config.end() && text->is_object();
  Reader r{ConfigSection(nested ? *text : config, nested ? "text_config." : ""), {}, {}, {}, {}, {}};
  if (auto t = r.top.text("model_type")) {
    r.out.model_type = *t;
  } else if (nested && config.contains("model_type") && config["model_type"].is_string()) {
    r.out.model_type = config["model_type"].get<std::string>();
  }
  if (auto name = config.find("_name_or_path"); name != config.end()) {
    if (!name->is_string()) {
      throw InvalidParameter("hf_config._name_or_path", name->dump().substr(0, 40),
                             "a string (the model's repository or folder)");
    }
    r.out.name_or_path = name->get<std::string>();
  }
  r.family = family_of(r.out.model_type);
  r.entry = r.out.model_type.empty() ? nullptr : find_model_type(r.out.model_type);
  if (r.entry) {
    r.top.set_aliases(attribute_pairs(r.entry->attribute_map));
    // A verified entry's note (its other layer kinds, in docs/models.md) is measured on a tiny
    // config, not this one: the config's own keys are reported instead (report_unread).
    if (!r.entry->verified) {
      r.out.unread.push_back("model_type = \"" + r.out.model_type + "\": not verified against " +
                             kModelTypesVerifiedWith + " (docs/models.md): " + r.entry->note);
    }
  } else if (!r.out.model_type.empty()) {
    r.out.unread.push_back("model_type = \"" + r.out.model_type + "\": not a model type verified against " +
                           kModelTypesVerifiedWith + " (docs/models.md); read as a Llama-style model (rotate_half: "
                           "half layout)");
  }
  r.find_rope_dict();
  r.read_head();
  // GPT-J's base is fixed and its rotary_dim given; DeepSeek's RoPE spans qk_rope_head_dim whole.
  const bool own_dims = r.family == Family::gptj || r.family == Family::deepseek;
  if (r.family != Family::gptj) r.read_theta();
  double partial = own_dims ? 0.0 : r.read_partial();
  r.read_scaling(partial);
  if (partial != 0) {
    // HF: dim = int(head_dim * partial_rotary_factor).
    r.out.params.rotary_dim = static_cast<std::int64_t>(static_cast<double>(r.out.params.head_dim) * partial);
  }
  if (r.out.model_type == "llama4" || r.out.model_type == "llama4_text") r.read_llama4_layer_kinds();
  r.report_unread();
  r.validate_named();
  return r.out;
}

HfRopeConfig read_hf_config_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw Error(path.string() + ": not valid JSON (" + e.what() + ")");
  }
  return read_hf_config(j);
}

}  // namespace posenc::models
