// `posenc eval FAMILY ...`: one case evaluated by the reference, every output element's exact
// value and its correctly rounded f64, f32, bf16 and f16 values.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.hpp"
#include "numbers.hpp"
#include "hf_vectors.hpp"
#include "posenc/reference/reference.hpp"

namespace posenc::cli {
namespace {

struct Value {
  std::string name;
  Rounded rounded;
};

struct Output {
  std::string family;
  std::vector<Value> values;
  std::string layout = "";  // RoPE: the layout used (interleaved or half), printed so that it is never assumed
};

void print(const Output& out, bool json) {
  if (json) {
    nlohmann::ordered_json j;
    j["family"] = out.family;
    if (!out.layout.empty()) j["layout"] = out.layout;
    j["values"] = nlohmann::ordered_json::array();
    for (const auto& v : out.values) {
      nlohmann::ordered_json e;
      e["name"] = v.name;
      e["exact"] = v.rounded.exact;
      for (Format f : kAllFormats) e[std::string(to_string(f))] = v.rounded.hex(f);
      j["values"].push_back(e);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << out.family << "\n";
  if (!out.layout.empty()) std::cout << "  layout " << out.layout << "\n";
  for (const auto& v : out.values) {
    std::cout << "  " << v.name << "\n    exact " << v.rounded.exact;
    for (Format f : kAllFormats) std::cout << "\n    " << to_string(f) << "  " << v.rounded.hex(f);
    std::cout << "\n";
  }
}

void add_named(Output& out, const std::vector<Rounded>& values, const std::string& prefix) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    out.values.push_back({prefix + "[" + std::to_string(i) + "]", values[i]});
  }
}

// Options shared by every family's subcommand are kept as text and parsed by posenc's own
// readers, so every error names the option and the text.
struct Text {
  std::optional<std::string> value;
  Option add(Command& app, const std::string& name, const std::string& help) {
    return app.option(name, value, help);
  }
};

struct SinusoidalOptions {
  Text dim, position, positions, base, layout, frequencies, x;
  bool json = false;

  SinusoidalParams params() const {
    SinusoidalParams p;
    p.d_model = parse_int64("--dim", *dim.value);
    if (base.value) p.base = parse_double("--base", *base.value);
    if (layout.value) p.layout = parse_sinusoidal_layout(*layout.value);
    if (frequencies.value) p.frequencies = parse_sinusoidal_frequencies(*frequencies.value);
    return p;
  }

  void add_common(Command& app) {
    dim.add(app, "--dim", "d_model, even >= 2").required();
    base.add(app, "--base", "frequency base (default 10000)");
    layout.add(app, "--layout", "interleaved (default) or concatenated");
    frequencies.add(app, "--frequencies", "paper (default) or tensor2tensor");
    app.flag("--json", json, "print one JSON object");
  }
};

struct RopeOptions {
  Text head_dim, rotary_dim, base, layout, partial, inverse, mrope_section, position, positions,
      q_position, k_position, x, q, k, scaling, factor, original, seq_len, beta_fast, beta_slow,
      truncate, mscale, mscale_all_dim, attention_factor, low_freq_factor, high_freq_factor,
      short_factor, long_factor, hf_config;
  bool json = false;

  RopeParams params() const {
    if (hf_config.value) return from_hf_config();
    if (!head_dim.value) throw InvalidParameter("--head-dim", "(missing)", "given, or --hf-config FILE");
    RopeParams p;
    p.head_dim = parse_int64("--head-dim", *head_dim.value);
    p.rotary_dim = rotary_dim.value ? parse_int64("--rotary-dim", *rotary_dim.value) : p.head_dim;
    if (base.value) p.base = parse_double("--base", *base.value);
    if (layout.value) p.layout = parse_rope_layout(*layout.value);
    if (partial.value) p.partial = parse_partial_rotary(*partial.value);
    if (inverse.value && parse_bool("--inverse", *inverse.value)) p.inverse = !p.inverse;
    if (mrope_section.value) p.mrope_section = parse_int64_list("--mrope-section", *mrope_section.value);
    RopeScaling& s = p.scaling;
    if (scaling.value) s.kind = parse_rope_scaling_kind(*scaling.value);
    auto real = [](const Text& t, const char* name, std::optional<double>& field) {
      if (t.value) field = parse_double(name, *t.value);
    };
    auto integer = [](const Text& t, const char* name, std::optional<std::int64_t>& field) {
      if (t.value) field = parse_int64(name, *t.value);
    };
    real(factor, "--factor", s.factor);
    integer(original, "--original-max-positions", s.original_max_positions);
    integer(seq_len, "--seq-len", s.seq_len);
    real(beta_fast, "--beta-fast", s.beta_fast);
    real(beta_slow, "--beta-slow", s.beta_slow);
    if (truncate.value) s.truncate = parse_bool("--truncate", *truncate.value);
    real(mscale, "--mscale", s.mscale);
    real(mscale_all_dim, "--mscale-all-dim", s.mscale_all_dim);
    real(attention_factor, "--attention-factor", s.attention_factor);
    real(low_freq_factor, "--low-freq-factor", s.low_freq_factor);
    real(high_freq_factor, "--high-freq-factor", s.high_freq_factor);
    if (short_factor.value) s.short_factor = parse_double_list("--short-factor", *short_factor.value);
    if (long_factor.value) s.long_factor = parse_double_list("--long-factor", *long_factor.value);
    return p;
  }

  // --hf-config: the model's RoPE from its config.json (posenc_hf_config). The config sets every
  // parameter option; only --inverse (the backward pass of the model's own rotation, which for a
  // model that rotates by -t, as NanoChat, is the rotation by +t) and --seq-len (a forward's
  // length, which dynamic and longrope need) may be given with it. Unread config keys are printed as notes
  // on stderr, so that stdout is the same as with the equivalent explicit options.
  RopeParams from_hf_config() const {
    const std::string& file = *hf_config.value;
    for (const auto& [text, name] : parameter_options()) {
      if (text->value) {
        throw InvalidParameter(name, "'" + *text->value + "'",
                               "absent with --hf-config " + file + " (the config sets it)");
      }
    }
    auto c = read_hf_config_with_notes(file);
    RopeParams p = c.params;
    if (inverse.value && parse_bool("--inverse", *inverse.value)) p.inverse = !p.inverse;
    if (c.needs_seq_len()) {
      if (!seq_len.value) {
        throw InvalidParameter("--seq-len", "(missing)",
                               "given with --hf-config " + file + " for its rope_type " +
                                   std::string(to_string(p.scaling.kind)) +
                                   " (a forward's length: largest position + 1)");
      }
      p.scaling.seq_len = parse_int64("--seq-len", *seq_len.value);
    } else if (seq_len.value) {
      throw InvalidParameter("--seq-len", "'" + *seq_len.value + "'",
                             "absent with --hf-config " + file + ": its scaling " +
                                 std::string(to_string(p.scaling.kind)) + " does not depend on the length");
    }
    return p;
  }

  // Every RoPE parameter option (what a config sets), with its name.
  std::vector<std::pair<const Text*, const char*>> parameter_options() const {
    return {{&head_dim, "--head-dim"}, {&rotary_dim, "--rotary-dim"}, {&base, "--base"}, {&layout, "--layout"},
            {&partial, "--partial"}, {&mrope_section, "--mrope-section"}, {&scaling, "--scaling"}, {&factor, "--factor"},
            {&original, "--original-max-positions"}, {&beta_fast, "--beta-fast"}, {&beta_slow, "--beta-slow"},
            {&truncate, "--truncate"}, {&mscale, "--mscale"}, {&mscale_all_dim, "--mscale-all-dim"},
            {&attention_factor, "--attention-factor"}, {&low_freq_factor, "--low-freq-factor"},
            {&high_freq_factor, "--high-freq-factor"}, {&short_factor, "--short-factor"}, {&long_factor, "--long-factor"}};
  }

  void add_common(Command& app) {
    hf_config.add(app, "--hf-config", "a Hugging Face config.json: the model's RoPE (replaces the parameter options)");
    head_dim.add(app, "--head-dim", "head dimension, even >= 2 (required without --hf-config)");
    rotary_dim.add(app, "--rotary-dim", "rotated dimensions, even, <= head_dim (default head_dim)");
    base.add(app, "--base", "rope theta (default 10000)");
    layout.add(app, "--layout", "interleaved (default, GPT-J) or half (GPT-NeoX, HF rotate_half)");
    partial.add(app, "--partial", "partial-rotary convention: standard (default) or proportional");
    inverse.add(app, "--inverse", "true: rotate by the negative angle");
    mrope_section.add(app, "--mrope-section", "M-RoPE section sizes, e.g. 16,24,24");
    scaling.add(app, "--scaling", "none, linear, ntk, dynamic, yarn, llama3, longrope");
    factor.add(app, "--factor", "scaling factor (ntk: alpha)");
    original.add(app, "--original-max-positions", "original context length");
    seq_len.add(app, "--seq-len", "current sequence length (dynamic, longrope)");
    beta_fast.add(app, "--beta-fast", "yarn beta_fast (default 32)");
    beta_slow.add(app, "--beta-slow", "yarn beta_slow (default 1)");
    truncate.add(app, "--truncate", "yarn: truncate the correction range (default true)");
    mscale.add(app, "--mscale", "yarn mscale");
    mscale_all_dim.add(app, "--mscale-all-dim", "yarn mscale_all_dim");
    attention_factor.add(app, "--attention-factor", "yarn/longrope attention factor override");
    low_freq_factor.add(app, "--low-freq-factor", "llama3 low_freq_factor");
    high_freq_factor.add(app, "--high-freq-factor", "llama3 high_freq_factor");
    short_factor.add(app, "--short-factor", "longrope short factors, comma separated");
    long_factor.add(app, "--long-factor", "longrope long factors, comma separated");
    app.flag("--json", json, "print one JSON object");
  }
};

struct AlibiOptions {
  Text heads, mode, head, query, key;
  bool json = false;
};

// `eval attention`: one small problem (SPEC.md section 2.7) given on the command line. RoPE's
// options are eval rope's, read only with --rope (or --hf-config); --head-dim is the attention's
// and, rotated, the rope's.
struct AttentionOptions {
  RopeOptions rope;
  bool rotated = false;
  Text value_dim, query_heads, kv_heads, alibi, mask, mask_values, scale, scale_denominator, scale_mscale_all_dim,
      query_positions, key_positions, q, k, v, table;

  AttentionParams params() const {
    AttentionParams p;
    if (rotated || rope.hf_config.value) {
      p.rope = rope.params();
      p.head_dim = p.rope->head_dim;
    } else {
      for (const auto& [text, name] : rope.parameter_options()) {
        if (text->value && text != &rope.head_dim) {
          throw InvalidParameter(name, "'" + *text->value + "'", "absent without --rope (a RoPE parameter)");
        }
      }
      if (rope.inverse.value) throw InvalidParameter("--inverse", "'" + *rope.inverse.value + "'", "absent without --rope");
      if (!rope.head_dim.value) throw InvalidParameter("--head-dim", "(missing)", "given, or --hf-config FILE");
      p.head_dim = parse_int64("--head-dim", *rope.head_dim.value);
    }
    p.value_dim = value_dim.value ? parse_int64("--value-dim", *value_dim.value) : p.head_dim;
    p.query_heads = query_heads.value ? parse_int64("--query-heads", *query_heads.value) : 1;
    p.kv_heads = kv_heads.value ? parse_int64("--kv-heads", *kv_heads.value) : p.query_heads;
    if (alibi.value) p.alibi = AlibiParams{p.query_heads, parse_alibi_mode(*alibi.value)};
    if (mask.value) p.mask = parse_attention_mask(*mask.value);
    if (scale.value) p.scale = parse_double("--scale", *scale.value);
    if (scale_denominator.value) p.scale_denominator = parse_double("--scale-denominator", *scale_denominator.value);
    if (scale_mscale_all_dim.value) {
      p.scale_mscale_all_dim = parse_double("--scale-mscale-all-dim", *scale_mscale_all_dim.value);
    }
    p.rope_table_given = table.value.has_value();
    return p;
  }

  void add(Command& app) {
    rope.add_common(app);
    app.flag("--rope", rotated, "rotate q and k with RoPE, its parameters as eval rope's options (--hf-config implies it)");
    value_dim.add(app, "--value-dim", "width of v and O (default head_dim)");
    query_heads.add(app, "--query-heads", "query heads H (default 1)");
    kv_heads.add(app, "--kv-heads", "KV heads G, dividing H: query head h reads KV head h / (H / G) (default H)");
    alibi.add(app, "--alibi", "ALiBi's bias with H heads: causal or symmetric (default none)");
    mask.add(app, "--mask", "none (default), causal (bottom-right aligned) or explicit (--mask-values)");
    mask_values.add(app, "--mask-values", "the explicit mask, queries x keys values 0 or 1, row-major");
    scale.add(app, "--scale", "the softmax scale, an exact binary64 value (default 1/sqrt(head_dim))");
    scale_denominator.add(app, "--scale-denominator", "the scale is 1/sqrt(this) (Gemma's query_pre_attn_scalar)");
    scale_mscale_all_dim.add(app, "--scale-mscale-all-dim", "DeepSeek-V2: the scale times g(factor, this)^2");
    query_positions.add(app, "--query-positions", "each query's position (M-RoPE: one per section, token by token)")
        .required();
    key_positions.add(app, "--key-positions", "each key's position (as --query-positions)").required();
    q.add(app, "--q", "queries x H x head_dim values, row-major").required();
    k.add(app, "--k", "keys x G x head_dim values, row-major").required();
    v.add(app, "--v", "keys x G x value_dim values, row-major").required();
    table.add(app, "--table", "given cos/sin rows instead of computed ones: (queries + keys) x 2 pairs values");
  }
};

}  // namespace

void add_eval_command(Command& app) {
  Command eval = app.add_command("eval", "evaluate one case with the reference");
  eval.require_subcommand();

  // Options live as long as the app: callbacks run after parsing.
  auto sin = std::make_shared<SinusoidalOptions>();
  Command c = eval.add_command("sinusoidal", "PE(position); with --x, x*sqrt(d)+PE");
  sin->add_common(c);
  sin->position.add(c, "--position", "position, [0, 2^53]").required();
  sin->x.add(c, "--x", "d_model input values for the x*sqrt(d)+PE combination");
  c.on_run([sin] {
    auto p = sin->params();
    auto pos = parse_int64("--position", *sin->position.value);
    Output out{"sinusoidal", {}};
    if (sin->x.value) {
      out.family = "sinusoidal-embed";
      add_named(out, reference::sinusoidal_embed(p, pos, parse_double_list("--x", *sin->x.value)), "y");
    } else {
      add_named(out, reference::sinusoidal_row(p, pos), "pe");
    }
    print(out, sin->json);
  });

  auto sdot = std::make_shared<SinusoidalOptions>();
  c = eval.add_command("sinusoidal-dot", "PE(a).PE(b)");
  sdot->add_common(c);
  sdot->positions.add(c, "--positions", "two positions a,b").required();
  c.on_run([sdot] {
    auto pos = parse_int64_list("--positions", *sdot->positions.value);
    if (pos.size() != 2) {
      throw InvalidParameter("--positions", "'" + *sdot->positions.value + "'", "exactly two positions a,b");
    }
    Output out{"sinusoidal-dot", {{"dot", reference::sinusoidal_dot(sdot->params(), pos[0], pos[1])}}};
    print(out, sdot->json);
  });

  auto rope = std::make_shared<RopeOptions>();
  c = eval.add_command("rope", "x rotated at --position; without --x, the cos/sin table row");
  rope->add_common(c);
  rope->position.add(c, "--position", "position (M-RoPE: one per section, comma separated)").required();
  rope->x.add(c, "--x", "head_dim input values");
  c.on_run([rope] {
    auto p = rope->params();
    auto pos = parse_int64_list("--position", *rope->position.value);
    Output out{"rope", {}, std::string(to_string(p.layout))};
    if (rope->x.value) {
      add_named(out, reference::rope_rotate(p, pos, parse_double_list("--x", *rope->x.value)), "y");
    } else {
      out.family = "rope-table";
      auto row = reference::rope_table_row(p, pos);
      std::size_t n = row.size() / 2;
      add_named(out, {row.begin(), row.begin() + static_cast<std::ptrdiff_t>(n)}, "cos");
      std::vector<Rounded> sines(row.begin() + static_cast<std::ptrdiff_t>(n), row.end());
      add_named(out, sines, "sin");
    }
    print(out, rope->json);
  });

  auto rfreq = std::make_shared<RopeOptions>();
  c = eval.add_command("rope-frequencies", "per-pair inverse frequencies and attention factor");
  rfreq->add_common(c);
  c.on_run([rfreq] {
    const auto p = rfreq->params();
    auto values = reference::rope_frequencies(p);
    Output out{"rope-frequencies", {}, std::string(to_string(p.layout))};
    Rounded attention = values.back();
    values.pop_back();
    add_named(out, values, "inv_freq");
    out.values.push_back({"attention_factor", attention});
    print(out, rfreq->json);
  });

  auto rdot = std::make_shared<RopeOptions>();
  c = eval.add_command("rope-dot", "q.k after rotating q at m and k at n");
  rdot->add_common(c);
  rdot->positions.add(c, "--positions", "m,n (single-axis RoPE)");
  rdot->q_position.add(c, "--q-position", "q's position (M-RoPE: one per section)");
  rdot->k_position.add(c, "--k-position", "k's position (M-RoPE: one per section)");
  rdot->q.add(c, "--q", "head_dim values of q").required();
  rdot->k.add(c, "--k", "head_dim values of k").required();
  c.on_run([rdot] {
    std::vector<std::int64_t> m, n;
    if (rdot->positions.value) {
      if (rdot->q_position.value || rdot->k_position.value) {
        throw InvalidParameter("--positions", "'" + *rdot->positions.value + "'",
                               "given alone, not with --q-position/--k-position");
      }
      auto pos = parse_int64_list("--positions", *rdot->positions.value);
      if (pos.size() != 2) {
        throw InvalidParameter("--positions", "'" + *rdot->positions.value + "'", "exactly two positions m,n");
      }
      m = {pos[0]};
      n = {pos[1]};
    } else if (rdot->q_position.value && rdot->k_position.value) {
      m = parse_int64_list("--q-position", *rdot->q_position.value);
      n = parse_int64_list("--k-position", *rdot->k_position.value);
    } else {
      throw InvalidParameter("--positions", "(missing)", "given, or both --q-position and --k-position");
    }
    const auto p = rdot->params();
    Output out{"rope-dot",
               {{"dot", reference::rope_dot(p, m, n, parse_double_list("--q", *rdot->q.value),
                                            parse_double_list("--k", *rdot->k.value))}},
               std::string(to_string(p.layout))};
    print(out, rdot->json);
  });

  auto att = std::make_shared<AttentionOptions>();
  c = eval.add_command("attention", "O and L of attention with RoPE or ALiBi inside (SPEC.md section 2.7)");
  att->add(c);
  c.on_run([att] {
    const AttentionParams p = att->params();
    const auto query_positions = parse_int64_list("--query-positions", *att->query_positions.value);
    const auto key_positions = parse_int64_list("--key-positions", *att->key_positions.value);
    const std::int64_t axes = p.position_axes();
    // The number of tokens is what the positions say (one per axis each).
    for (const auto& [positions, name] : {std::pair{&query_positions, "--query-positions"}, {&key_positions, "--key-positions"}}) {
      if (positions->empty() || static_cast<std::int64_t>(positions->size()) % axes != 0) {
        throw InvalidParameter(name, "(" + std::to_string(positions->size()) + " values)",
                               "a non-empty multiple of the position axes (" + std::to_string(axes) + ")");
      }
    }
    const auto q = parse_double_list("--q", *att->q.value), k = parse_double_list("--k", *att->k.value),
               v = parse_double_list("--v", *att->v.value);
    std::vector<std::uint8_t> mask;
    if (att->mask_values.value) {
      for (const auto m : parse_int64_list("--mask-values", *att->mask_values.value)) {
        if (m != 0 && m != 1) throw InvalidParameter("--mask-values", std::to_string(m), "0 or 1");
        mask.push_back(static_cast<std::uint8_t>(m));
      }
    }
    const auto table = att->table.value ? parse_double_list("--table", *att->table.value) : std::vector<double>{};
    AttentionInputs in;
    in.queries = static_cast<std::int64_t>(query_positions.size()) / axes;
    in.keys = static_cast<std::int64_t>(key_positions.size()) / axes;
    in.query_positions = query_positions;
    in.key_positions = key_positions;
    in.q = q;
    in.k = k;
    in.v = v;
    in.mask = mask;
    in.table = table;
    const auto result = reference::attention(p, in);
    Output out{"attention", {}, p.rope ? std::string(to_string(p.rope->layout)) : ""};
    for (std::size_t j = 0; j < result.values.size(); ++j) {
      out.values.push_back({attention_output_name(p, in.queries, j), result.values[j]});
    }
    out.values.push_back({"scale", reference::attention_scale(p)});
    print(out, att->rope.json);
  });

  auto alibi = std::make_shared<AlibiOptions>();
  c = eval.add_command("alibi", "slopes; with --query-position/--key-position, the biases");
  alibi->heads.add(c, "--heads", "number of heads, >= 1").required();
  alibi->mode.add(c, "--mode", "causal (default) or symmetric");
  alibi->head.add(c, "--head", "only this head (0-based)");
  alibi->query.add(c, "--query-position", "query position i");
  alibi->key.add(c, "--key-position", "key position j");
  c.flag("--json", alibi->json, "print one JSON object");
  c.on_run([alibi] {
    AlibiParams p;
    p.n_heads = parse_int64("--heads", *alibi->heads.value);
    if (alibi->mode.value) p.mode = parse_alibi_mode(*alibi->mode.value);
    validate(p);
    std::int64_t first = 0, last = p.n_heads - 1;
    if (alibi->head.value) first = last = parse_int64("--head", *alibi->head.value);
    Output out{"alibi", {}};
    if (!alibi->query.value && !alibi->key.value) {
      auto slopes = reference::alibi_slopes(p);
      if (alibi->head.value) validate_alibi_head(p, first);
      for (auto h = first; h <= last; ++h) {
        out.values.push_back({"slope[" + std::to_string(h) + "]", slopes[static_cast<std::size_t>(h)]});
      }
    } else {
      if (!alibi->query.value || !alibi->key.value) {
        throw InvalidParameter(alibi->query.value ? "--key-position" : "--query-position", "(missing)",
                               "given together with the other position");
      }
      out.family = "alibi-bias";
      auto i = parse_int64("--query-position", *alibi->query.value);
      auto j = parse_int64("--key-position", *alibi->key.value);
      for (auto h = first; h <= last; ++h) {
        out.values.push_back({"bias[" + std::to_string(h) + "]", reference::alibi_bias(p, h, i, j)});
      }
    }
    print(out, alibi->json);
  });
}

}  // namespace posenc::cli
