// Attention identities (SPEC.md section 6, property-based checks) through the implementation's
// attention: what a correct kernel must satisfy whatever its arithmetic, each side judged with the
// attention bound of SPEC.md section 5 in the implementation's format. Every identity here is
// expressible as attention cases (parameters and inputs), with no constant or operation the case
// type does not have: a constant added to a row's logits is an extra unrotated dimension of q and
// k, a key's duplicate is a second key at its position.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "posenc/errors.hpp"
#include "posenc/judge/generators.hpp"
#include "posenc/vectors/expected.hpp"
#include "property_support.hpp"

namespace posenc::conformance::properties {
namespace {

// Positions of the generated problems start at most here and shifts reach 2^20: far enough that
// an angle formed wrong or at the wrong position shows, near enough that a binary32 kernel's
// `standard` allowance (which grows with the angle) still judges something in every format.
constexpr std::int64_t kFirstPosition = std::int64_t{1} << 16;
constexpr std::int64_t kLargestShift = std::int64_t{1} << 20;

struct Problem {
  VectorGroup g;
  VectorCase c;
  const AttentionParams& p() const { return std::get<AttentionParams>(g.params); }
  AttentionData& a() { return c.attention; }
  const AttentionData& a() const { return c.attention; }
};

Problem problem(const AttentionParams& p, const generators::AttentionShape& s) {
  Problem r{group_of(CaseType::attention, p), {}};
  AttentionData& a = r.c.attention;
  a.queries = s.queries;
  a.keys = s.keys;
  a.query_positions = s.query_positions;
  a.key_positions = s.key_positions;
  a.mask = s.mask;
  a.q = any_nonzero_vector(a.queries * p.query_heads * p.head_dim);
  a.k = any_nonzero_vector(a.keys * p.kv_heads * p.head_dim);
  a.v = any_nonzero_vector(a.keys * p.kv_heads * p.value_dim);
  return r;
}

Problem any_problem(const AttentionParams& p, std::int64_t max_queries = 4) {
  return problem(p, generators::any_attention_shape(p, kFirstPosition, 8, max_queries));
}

std::string describe(const Problem& x) {
  const AttentionData& a = x.a();
  std::string s = generators::describe(x.p()) + ", " + std::to_string(a.queries) + " queries at";
  for (auto v : a.query_positions) s += " " + std::to_string(v);
  s += ", " + std::to_string(a.keys) + " keys at";
  for (auto v : a.key_positions) s += " " + std::to_string(v);
  if (!a.mask.empty()) {
    s += ", mask ";
    for (auto m : a.mask) s += m ? "1" : "0";
  }
  s += ", q = " + show(a.q) + ", k = " + show(a.k) + ", v = " + show(a.v);
  return s;
}

// Output e of a case: O[row, head, column] or L[row, head].
std::string output_name(const Problem& x, std::size_t e) {
  const auto& p = x.p();
  const auto o_count = static_cast<std::size_t>(x.a().queries * p.query_heads * p.value_dim);
  const auto heads = static_cast<std::size_t>(p.query_heads), dv = static_cast<std::size_t>(p.value_dim);
  if (e < o_count) {
    return "O[row " + std::to_string(e / dv / heads) + ", head " + std::to_string(e / dv % heads) + ", column " +
           std::to_string(e % dv) + "]";
  }
  const std::size_t r = e - o_count;
  return "L[row " + std::to_string(r / heads) + ", head " + std::to_string(r % heads) + "]";
}

// The implementation's outputs and, per output, the largest error the profile allows it.
struct Answer {
  std::vector<double> y, allowed;
};

// The attention bound (SPEC.md section 5) is formed from the exact softmax's kappa, sum p |v| and
// logit range, which the reference supplies here as the golden vectors store them. The reference
// certifies every format's rounding at once, and an output that is exactly 0 or a rounding
// midpoint of some format but reached through inexact arithmetic (a logit that is 0 or dyadic
// through rotations, a weight of exactly 1 through exp) has no certifiable rounding: such a
// problem is discarded before the implementation sees it, so that no implementation is asked for
// what cannot be judged.
Answer answer(Implementation& impl, Problem& x, const Tolerance& t) {
  try {
    fill_expected(x.g, x.c);
  } catch (const Uncertifiable&) {
    RC_DISCARD("the reference cannot certify this problem's rounding");
  }
  Answer r;
  r.y = call(impl, x.g, x.c);
  r.allowed = allowed(x.g, x.c, r.y, t);
  return r;
}

// Whether output y agrees with `expected` (what the property derives for it) within `allowed`.
// Past the format's range an output is the infinity of its sign (SPEC.md section 5): the same
// infinity agrees, and an infinity agrees with a finite value of its sign that is within
// `allowed` of the overflow threshold (the largest finite value plus half an ulp).
bool agrees(double y, double expected, double allowed) {
  if (y == expected) return true;
  if (std::isinf(y) != std::isinf(expected)) {
    const double finite = std::isinf(y) ? expected : y;
    const FormatSpec f = spec(format());
    const double threshold = std::ldexp(2 - std::ldexp(1.0, -f.precision), f.emax);
    return std::signbit(y) == std::signbit(expected) && std::fabs(finite) + allowed >= threshold;
  }
  return std::fabs(y - expected) <= allowed;
}

// Every output of two answers whose exact values are equal: each within its own bound of that
// value, so within the sum of both of each other.
void expect_same(const Problem& x, const Answer& a, const Problem& y, const Answer& b, const std::string& how) {
  for (std::size_t e = 0; e < a.y.size(); ++e) {
    if (!agrees(a.y[e], b.y[e], a.allowed[e] + b.allowed[e])) {
      RC_FAIL(output_name(x, e) + " = " + show(a.y[e]) + " (allowed error " + show(a.allowed[e]) + ") but " +
              show(b.y[e]) + " (allowed " + show(b.allowed[e]) + ") " + how + "; " + describe(x) + "; then " +
              describe(y));
    }
  }
}

std::size_t o_count(const Problem& x) {
  return static_cast<std::size_t>(x.a().queries * x.p().query_heads * x.p().value_dim);
}

// RoPE or ALiBi: a problem without an encoding gets symmetric ALiBi (no constraint on positions).
AttentionParams encoded_params() {
  auto p = generators::any_attention_params();
  if (!p.rope && !p.alibi) {
    p.alibi = AlibiParams{};
    p.alibi->n_heads = p.query_heads;
    p.alibi->mode = AlibiMode::symmetric;
  }
  return p;
}

// RoPE rotates q and k by their own positions and ALiBi's bias reads their distance, so the
// logits, and O and L, depend on distances only (SPEC.md section 2.7).
void position_shift(Implementation& impl, const Tolerance& t) {
  Problem a = any_problem(encoded_params());
  const auto s = *rc::gen::inRange<std::int64_t>(1, kLargestShift + 1);
  Problem b = a;
  for (auto& v : b.a().query_positions) v += s;
  for (auto& v : b.a().key_positions) v += s;
  const Answer ya = answer(impl, a, t);
  const Answer yb = answer(impl, b, t);
  expect_same(a, ya, b, yb, "after shifting every position by " + std::to_string(s));
}

// Two dimensions appended to q and every key past the rotated span (the rope's head_dim grows,
// its rotary_dim does not, so they are not rotated): q gets (a_ih, 0), every key of KV head g
// (c_g, 0), which adds scale a_ih c_g to every logit of row (i, h). The softmax does not see a
// constant: O is unchanged and L grows by it. The scale is given explicitly, so that it does not
// follow head_dim.
void logit_offset(Implementation& impl, const Tolerance& t) {
  auto p = generators::any_attention_params();
  if (p.rope) p.rope->partial = PartialRotary::standard;  // frequencies of rotary_dim, not head_dim
  p.scale_denominator.reset();
  p.scale_mscale_all_dim.reset();
  if (!p.scale) p.scale = *rc::gen::element(0.125, 0.25, 0.5);
  Problem a = any_problem(p);
  auto wide = p;
  wide.head_dim += 2;
  if (wide.rope) wide.rope->head_dim += 2;
  Problem b{group_of(CaseType::attention, wide), a.c};
  const auto d = static_cast<std::size_t>(p.head_dim);
  const auto row_offsets = any_nonzero_vector(a.a().queries * p.query_heads), key_offsets = any_nonzero_vector(p.kv_heads);
  auto widen = [&](const std::vector<double>& x, const std::vector<double>& extra) {
    std::vector<double> out;
    for (std::size_t r = 0; r < extra.size(); ++r) {
      out.insert(out.end(), x.begin() + static_cast<std::ptrdiff_t>(r * d), x.begin() + static_cast<std::ptrdiff_t>((r + 1) * d));
      out.insert(out.end(), {extra[r], 0.0});
    }
    return out;
  };
  std::vector<double> key_extra;
  for (std::int64_t j = 0; j < a.a().keys; ++j) key_extra.insert(key_extra.end(), key_offsets.begin(), key_offsets.end());
  b.a().q = widen(a.a().q, row_offsets);
  b.a().k = widen(a.a().k, key_extra);
  const Answer ya = answer(impl, a, t);
  const Answer yb = answer(impl, b, t);
  const auto heads = static_cast<std::size_t>(p.query_heads);
  for (std::size_t e = 0; e < ya.y.size(); ++e) {
    double expected = ya.y[e], slack = 0;
    if (e >= o_count(a)) {  // L of row (i, h) = row r: the offset is scale a_r c_g, g = h's KV head
      const std::size_t r = e - o_count(a);
      const double offset = *p.scale * row_offsets[r] * key_offsets[static_cast<std::size_t>(p.kv_head(static_cast<std::int64_t>(r % heads)))];
      expected += offset;
      slack = 2 * unit() * std::fabs(expected);  // the binary64 sum and product above, and a margin
    }
    if (!agrees(yb.y[e], expected, ya.allowed[e] + yb.allowed[e] + slack)) {
      RC_FAIL(output_name(a, e) + " = " + show(yb.y[e]) + " with the extra dimensions but " + show(expected) +
              " expected from " + show(ya.y[e]) + " without; row offsets " + show(row_offsets) + ", key offsets " +
              show(key_offsets) + "; " + describe(a));
    }
  }
}

// The softmax and P V are sums over keys: the order of the keys, carried with their positions,
// values and mask columns, changes nothing (the causal mask reads the order, so it becomes the
// explicit mask of the same visibility first).
void key_permutation(Implementation& impl, const Tolerance& t) {
  auto p = generators::any_attention_params();
  Problem original = any_problem(p);
  auto explicit_params = p;
  explicit_params.mask = AttentionMask::explicit_;
  Problem a{group_of(CaseType::attention, explicit_params), original.c};
  if (p.mask != AttentionMask::explicit_) {
    const AttentionInputs in = original.a().inputs();
    a.a().mask.clear();
    for (std::int64_t i = 0; i < in.queries; ++i) {
      for (std::int64_t j = 0; j < in.keys; ++j) a.a().mask.push_back(attention_visible(p, in, i, j) ? 1 : 0);
    }
  }
  const auto n = static_cast<std::size_t>(a.a().keys);
  std::vector<std::size_t> order(n);  // key j of b is key order[j] of a
  for (std::size_t j = 0; j < n; ++j) order[j] = j;
  for (std::size_t j = n; j > 1; --j) std::swap(order[j - 1], order[static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, j))]);
  Problem b = a;
  auto permute_rows = [&](const std::vector<double>& from, std::vector<double>& to, std::size_t width) {
    for (std::size_t j = 0; j < n; ++j) {
      std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(order[j] * width), width,
                  to.begin() + static_cast<std::ptrdiff_t>(j * width));
    }
  };
  permute_rows(a.a().k, b.a().k, static_cast<std::size_t>(p.kv_heads * p.head_dim));
  permute_rows(a.a().v, b.a().v, static_cast<std::size_t>(p.kv_heads * p.value_dim));
  const auto axes = static_cast<std::size_t>(p.position_axes());
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t x = 0; x < axes; ++x) b.a().key_positions[j * axes + x] = a.a().key_positions[order[j] * axes + x];
    for (std::int64_t i = 0; i < a.a().queries; ++i) {
      const auto row = static_cast<std::size_t>(i) * n;
      b.a().mask[row + j] = a.a().mask[row + order[j]];
    }
  }
  const Answer ya = answer(impl, a, t);
  const Answer yb = answer(impl, b, t);
  std::string how = "after permuting the keys to";
  for (auto j : order) how += " " + std::to_string(j);
  expect_same(a, ya, b, yb, how);
}

// One query row that sees one key: its weight is 1, so O is that key's value exactly. The same
// key twice (a second key at its position with its k and v) halves each weight: O is unchanged
// and L grows by ln 2.
void single_key(Implementation& impl, const Tolerance& t) {
  auto p = generators::any_attention_params();
  auto shape = generators::any_attention_shape(p, kFirstPosition, 8, 1);
  std::int64_t seen = 0;  // the key the row sees
  if (shape.keys > 1) {
    p.mask = AttentionMask::explicit_;
    seen = *rc::gen::inRange<std::int64_t>(0, shape.keys);
    shape.mask.assign(static_cast<std::size_t>(shape.keys), 0);
    shape.mask[static_cast<std::size_t>(seen)] = 1;
  }
  Problem a = problem(p, shape);
  Problem b = a;
  const auto axes = static_cast<std::size_t>(p.position_axes());
  const auto kd = static_cast<std::size_t>(p.kv_heads * p.head_dim), vd = static_cast<std::size_t>(p.kv_heads * p.value_dim);
  const auto s = static_cast<std::size_t>(seen);
  auto& bb = b.a();
  bb.keys += 1;
  for (std::size_t x = 0; x < axes; ++x) bb.key_positions.push_back(a.a().key_positions[s * axes + x]);
  bb.k.insert(bb.k.end(), a.a().k.begin() + static_cast<std::ptrdiff_t>(s * kd), a.a().k.begin() + static_cast<std::ptrdiff_t>((s + 1) * kd));
  bb.v.insert(bb.v.end(), a.a().v.begin() + static_cast<std::ptrdiff_t>(s * vd), a.a().v.begin() + static_cast<std::ptrdiff_t>((s + 1) * vd));
  if (p.mask == AttentionMask::explicit_) bb.mask.push_back(1);
  const Answer ya = answer(impl, a, t);
  const Answer yb = answer(impl, b, t);
  const auto dv = static_cast<std::size_t>(p.value_dim);
  for (std::int64_t h = 0; h < p.query_heads; ++h) {
    const auto g = static_cast<std::size_t>(p.kv_head(h));
    for (std::size_t k = 0; k < dv; ++k) {
      const std::size_t e = static_cast<std::size_t>(h) * dv + k;
      const double v = a.a().v[s * vd + g * dv + k];
      if (!agrees(ya.y[e], v, ya.allowed[e])) {
        RC_FAIL(output_name(a, e) + " = " + show(ya.y[e]) + " (allowed error " + show(ya.allowed[e]) +
                ") but the row sees key " + std::to_string(seen) + " alone, whose value is " + show(v) + "; " +
                describe(a));
      }
      if (!agrees(yb.y[e], ya.y[e], ya.allowed[e] + yb.allowed[e])) {
        RC_FAIL(output_name(a, e) + " = " + show(yb.y[e]) + " with key " + std::to_string(seen) + " twice but " +
                show(ya.y[e]) + " with it once; " + describe(b));
      }
    }
    const std::size_t l = o_count(a) + static_cast<std::size_t>(h);
    const double expected = ya.y[l] + std::numbers::ln2;
    if (!agrees(yb.y[l], expected, ya.allowed[l] + yb.allowed[l] + 2 * unit() * std::fabs(expected))) {
      RC_FAIL(output_name(a, l) + " = " + show(yb.y[l]) + " with key " + std::to_string(seen) + " twice, but " +
              show(ya.y[l]) + " + ln 2 = " + show(expected) + " with it once; " + describe(b));
    }
  }
}

// O is linear in V for fixed weights: O(a V1 + b V2) = a O(V1) + b O(V2), and L does not depend
// on V. a and b have at most 2 significant bits, so a V1 + b V2 has at most g + 4 bits on the
// grid of 2^-g and is exact in the format (SPEC.md section 6's grid rule).
void value_linearity(Implementation& impl, const Tolerance& t) {
  const auto p = generators::any_attention_params();
  Problem one = any_problem(p);
  Problem two = one, both = one;
  two.a().v = any_nonzero_vector(static_cast<std::int64_t>(one.a().v.size()));
  const double alpha = *rc::gen::element(-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0);
  const double beta = *rc::gen::element(-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0);
  for (std::size_t e = 0; e < both.a().v.size(); ++e) both.a().v[e] = alpha * one.a().v[e] + beta * two.a().v[e];
  const Answer y1 = answer(impl, one, t), y2 = answer(impl, two, t), y = answer(impl, both, t);
  for (std::size_t e = 0; e < y.y.size(); ++e) {
    if (e < o_count(one)) {
      const double combined = alpha * y1.y[e] + beta * y2.y[e];
      const double allowed = y.allowed[e] + std::fabs(alpha) * y1.allowed[e] + std::fabs(beta) * y2.allowed[e] +
                             2 * unit() * (std::fabs(alpha * y1.y[e]) + std::fabs(beta * y2.y[e]));
      if (!agrees(y.y[e], combined, allowed)) {
        RC_FAIL(output_name(one, e) + " = " + show(y.y[e]) + " for V = " + show(alpha) + " V1 + " + show(beta) +
                " V2, but " + show(alpha) + " O(V1) + " + show(beta) + " O(V2) = " + show(combined) + " (allowed " +
                show(allowed) + "); V2 = " + show(two.a().v) + "; " + describe(one));
      }
    } else if (!agrees(y.y[e], y1.y[e], y.allowed[e] + y1.allowed[e])) {
      RC_FAIL(output_name(one, e) + " = " + show(y.y[e]) + " for V = " + show(alpha) + " V1 + " + show(beta) +
              " V2 but " + show(y1.y[e]) + " for V1: L does not depend on V; " + describe(one));
    }
  }
}

// A decode step is the last row of a causal prefill over the same keys: the causal mask is aligned
// to the last key, so the last query sees every key in both.
void decode_is_last_prefill_row(Implementation& impl, const Tolerance& t) {
  auto p = generators::any_attention_params();
  p.mask = AttentionMask::causal;
  Problem prefill = any_problem(p);
  Problem decode = prefill;
  const auto axes = static_cast<std::size_t>(p.position_axes());
  const auto qd = static_cast<std::size_t>(p.query_heads * p.head_dim);
  const auto last = static_cast<std::size_t>(prefill.a().queries - 1);
  auto& d = decode.a();
  d.queries = 1;
  d.query_positions.assign(prefill.a().query_positions.begin() + static_cast<std::ptrdiff_t>(last * axes),
                           prefill.a().query_positions.end());
  d.q.assign(prefill.a().q.begin() + static_cast<std::ptrdiff_t>(last * qd), prefill.a().q.end());
  const Answer yp = answer(impl, prefill, t), yd = answer(impl, decode, t);
  const auto heads = static_cast<std::size_t>(p.query_heads), dv = static_cast<std::size_t>(p.value_dim);
  for (std::size_t e = 0; e < yd.y.size(); ++e) {
    // Decode output e is prefill output: O of the last row, or L of the last row.
    const std::size_t from = e < o_count(decode) ? last * heads * dv + e : o_count(prefill) + last * heads + (e - o_count(decode));
    if (!agrees(yd.y[e], yp.y[from], yd.allowed[e] + yp.allowed[from])) {
      RC_FAIL(output_name(decode, e) + " of the decode step = " + show(yd.y[e]) + " but " + output_name(prefill, from) +
              " of the prefill = " + show(yp.y[from]) + "; " + describe(prefill));
    }
  }
}

}  // namespace

std::vector<Named> attention_properties() {
  return {
      {"attention_position_shift: every position shifted by s leaves O and L unchanged (RoPE, ALiBi)", position_shift},
      {"attention_logit_offset: a constant added to a row's logits (an extra unrotated q, k dimension) leaves O "
       "unchanged and adds it to L",
       logit_offset},
      {"attention_key_permutation: keys permuted with their positions, values and mask give the same O and L",
       key_permutation},
      {"attention_single_key: a row that sees one key gives its value; that key twice, the same O and L + ln 2",
       single_key},
      {"attention_value_linearity: O(a V1 + b V2) = a O(V1) + b O(V2), L independent of V", value_linearity},
      {"attention_decode_is_last_prefill_row: a decode step equals the last row of a causal prefill",
       decode_is_last_prefill_row},
  };
}

}  // namespace posenc::conformance::properties
