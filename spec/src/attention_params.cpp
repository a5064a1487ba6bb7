#include <array>
#include <cmath>
#include <string>

#include "check.hpp"
#include "posenc/params/attention.hpp"
#include "posenc/params/choices.hpp"
#include "posenc/params/inputs.hpp"

namespace posenc {
namespace {

constexpr std::array kMasks{"none", "causal", "explicit"};
constexpr std::int64_t kMaxDim = std::int64_t{1} << 16;
constexpr std::int64_t kMaxHeads = std::int64_t{1} << 12;
constexpr std::int64_t kMaxQueries = std::int64_t{1} << 16;
constexpr std::int64_t kMaxKeys = std::int64_t{1} << 24;

void check_size(std::string_view name, std::size_t size, std::int64_t expected, std::string_view shape) {
  if (static_cast<std::int64_t>(size) != expected) {
    check::fail(name, "(" + std::to_string(size) + " values)",
                "exactly " + std::to_string(expected) + " values (" + std::string(shape) + ")");
  }
}

void check_finite(std::string_view name, std::span<const double> x) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      check::fail(std::string(name) + "[" + std::to_string(i) + "]", check::format_value(x[i]), "finite");
    }
  }
}

// The first visible key of row i, or keys when there is none.
std::int64_t first_visible(const AttentionParams& p, const AttentionInputs& in, std::int64_t i) {
  for (std::int64_t j = 0; j < in.keys; ++j) {
    if (attention_visible(p, in, i, j)) return j;
  }
  return in.keys;
}

}  // namespace

std::vector<ParameterChoices> attention_choices() { return {{"attention", "attention.mask", kMasks}}; }

void validate(const AttentionParams& p) {
  check::in_range("attention.head_dim", p.head_dim, 1, kMaxDim);
  check::in_range("attention.value_dim", p.value_dim, 1, kMaxDim);
  check::in_range("attention.query_heads", p.query_heads, 1, kMaxHeads);
  check::in_range("attention.kv_heads", p.kv_heads, 1, p.query_heads);
  if (p.query_heads % p.kv_heads != 0) {
    check::fail("attention.kv_heads", check::format_value(p.kv_heads),
                "a divisor of query_heads (" + std::to_string(p.query_heads) + ")");
  }
  if (p.rope) {
    validate(*p.rope);
    if (p.rope->head_dim != p.head_dim) {
      check::fail("attention.rope.head_dim", check::format_value(p.rope->head_dim),
                  "equal to attention.head_dim (" + std::to_string(p.head_dim) + ")");
    }
  }
  if (p.rope_table_given && !p.rope) {
    check::fail("attention.rope_table_given", "true", "false when the attention has no rope");
  }
  if (p.alibi) {
    validate(*p.alibi);
    if (p.alibi->n_heads != p.query_heads) {
      check::fail("attention.alibi.n_heads", check::format_value(p.alibi->n_heads),
                  "equal to attention.query_heads (" + std::to_string(p.query_heads) + ")");
    }
  }
  if (p.scale) {
    check::finite_above("attention.scale", *p.scale, 0.0);
    if (p.scale_denominator) {
      check::fail("attention.scale_denominator", check::format_value(*p.scale_denominator),
                  "absent when attention.scale is given");
    }
  }
  if (p.scale_denominator) check::finite_above("attention.scale_denominator", *p.scale_denominator, 0.0);
  if (p.scale_mscale_all_dim) {
    check::finite_above("attention.scale_mscale_all_dim", *p.scale_mscale_all_dim, 0.0);
    if (p.scale) {
      check::fail("attention.scale_mscale_all_dim", check::format_value(*p.scale_mscale_all_dim),
                  "absent when attention.scale is given (it corrects the default scale 1/sqrt(d))");
    }
    if (!p.rope || !p.rope->scaling.factor) {
      check::fail("attention.scale_mscale_all_dim", check::format_value(*p.scale_mscale_all_dim),
                  "absent unless the rope has a scaling factor (its g(factor, mscale_all_dim)^2)");
    }
  }
}

void validate(const AttentionParams& p, std::int64_t queries, std::int64_t keys) {
  validate(p);
  check::in_range("attention.queries", queries, 1, kMaxQueries);
  check::in_range("attention.keys", keys, 1, kMaxKeys);
}

void validate(const AttentionParams& p, const AttentionInputs& in) {
  validate(p, in.queries, in.keys);
  const std::int64_t axes = p.position_axes();
  check_size("attention.query_positions", in.query_positions.size(), in.queries * axes, "queries x position axes");
  check_size("attention.key_positions", in.key_positions.size(), in.keys * axes, "keys x position axes");
  check_size("attention.q", in.q.size(), in.queries * p.query_heads * p.head_dim, "queries x query_heads x head_dim");
  check_size("attention.k", in.k.size(), in.keys * p.kv_heads * p.head_dim, "keys x kv_heads x head_dim");
  check_size("attention.v", in.v.size(), in.keys * p.kv_heads * p.value_dim, "keys x kv_heads x value_dim");
  check_finite("attention.q", in.q);
  check_finite("attention.k", in.k);
  check_finite("attention.v", in.v);
  if (p.mask == AttentionMask::explicit_) {
    check_size("attention.mask", in.mask.size(), in.queries * in.keys, "queries x keys");
    for (std::size_t i = 0; i < in.mask.size(); ++i) {
      if (in.mask[i] > 1) {
        check::fail("attention.mask[" + std::to_string(i) + "]", std::to_string(in.mask[i]), "0 or 1");
      }
    }
  } else if (!in.mask.empty()) {
    check::fail("attention.mask", "(" + std::to_string(in.mask.size()) + " values)",
                "absent for mask " + check::quoted(to_string(p.mask)));
  }
  if (p.mask == AttentionMask::causal && in.queries > in.keys) {
    check::fail("attention.queries", check::format_value(in.queries),
                "<= keys (" + std::to_string(in.keys) + ") for a causal mask: the queries are the last tokens");
  }
  if (p.rope_table_given) {
    check_size("attention.table", in.table.size(), (in.queries + in.keys) * 2 * p.rope->pair_count(),
               "(queries + keys) x 2 x pairs");
    check_finite("attention.table", in.table);
  } else if (!in.table.empty()) {
    check::fail("attention.table", "(" + std::to_string(in.table.size()) + " values)",
                "absent unless rope_table_given");
  }
  for (std::int64_t i = 0; i < in.queries; ++i) {
    if (first_visible(p, in, i) == in.keys) {
      check::fail("attention.mask", "(row " + std::to_string(i) + " sees no key)",
                  "at least one visible key per query row: a softmax over no key is undefined");
    }
  }
  if (p.alibi) {
    // ALiBi's distance is on the first position axis.
    for (std::int64_t i = 0; i < in.queries; ++i) {
      const std::int64_t query = in.query_positions[static_cast<std::size_t>(i * axes)];
      for (std::int64_t j = 0; j < in.keys; ++j) {
        if (!attention_visible(p, in, i, j)) continue;
        try {
          validate_alibi_positions(*p.alibi, query, in.key_positions[static_cast<std::size_t>(j * axes)]);
        } catch (const InvalidParameter& e) {
          check::fail("attention." + e.parameter(), e.value() + " (query row " + std::to_string(i) + ", key " +
                                                        std::to_string(j) + ")",
                      e.allowed());
        }
      }
    }
  }
}

bool attention_visible(const AttentionParams& p, const AttentionInputs& in, std::int64_t i, std::int64_t j) {
  switch (p.mask) {
    case AttentionMask::none: return true;
    case AttentionMask::causal: return j <= i + (in.keys - in.queries);
    case AttentionMask::explicit_: return in.mask[static_cast<std::size_t>(i * in.keys + j)] != 0;
  }
  return false;
}

std::int64_t attention_outputs(const AttentionParams& p, std::int64_t queries) {
  return queries * p.query_heads * (p.value_dim + 1);
}

std::string attention_output_name(const AttentionParams& p, std::int64_t queries, std::size_t j) {
  const auto heads = static_cast<std::size_t>(p.query_heads), dv = static_cast<std::size_t>(p.value_dim);
  const std::size_t o_count = static_cast<std::size_t>(queries) * heads * dv;
  if (j < o_count) {
    return "O[query " + std::to_string(j / (heads * dv)) + ", head " + std::to_string(j / dv % heads) + ", column " +
           std::to_string(j % dv) + "]";
  }
  const std::size_t row = j - o_count;
  return "L[query " + std::to_string(row / heads) + ", head " + std::to_string(row % heads) + "]";
}

std::string_view to_string(AttentionMask v) { return kMasks[static_cast<std::size_t>(v)]; }

AttentionMask parse_attention_mask(std::string_view s) {
  return check::parse_enum<AttentionMask>("attention.mask", s, kMasks);
}

}  // namespace posenc
