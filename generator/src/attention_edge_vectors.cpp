// Attention inputs chosen to stress the softmax and a kernel's interface (SPEC.md sections 2.7, 4,
// 5): ill-conditioned rows (attention/conditioning), cos/sin tables given in the storage formats
// (attention/tables), and one invalid case per rule of validate(AttentionParams, AttentionInputs)
// (attention/invalid).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "attention_cases.hpp"
#include "posenc/reference/reference.hpp"
#include "published_configs.hpp"

namespace posenc::generator::attention_cases {
namespace {

// RoPE in long double, to build inputs only: a key built with it is rounded to a coarse grid
// (exact in every format) and the reference computes the expected values from that exact key, so
// any approximation here changes which case is stored, never its expected values.
class ApproxRope {
 public:
  explicit ApproxRope(const RopeParams& r) : r_(r) {
    const auto f = reference::rope_frequencies(r);
    for (std::size_t i = 0; i + 1 < f.size(); ++i) inv_freq_.push_back(f[i].f64());
    factor_ = f.back().f64();
  }
  double factor() const { return factor_; }
  // x rotated by `distance` positions (single-axis RoPE): R(p_q - p_k) q is the key direction
  // that R(p_k) takes to R(p_q) q, and q' . k' = q . R(p_k - p_q) k.
  std::vector<long double> rotate(std::span<const double> x, std::int64_t distance) const {
    std::vector<long double> y(x.begin(), x.end());
    for (std::int64_t i = 0; i < r_.pair_count(); ++i) {
      const long double t = static_cast<long double>(distance) * inv_freq_[static_cast<std::size_t>(i)];
      const auto a = static_cast<std::size_t>(r_.pair_first(i)), b = static_cast<std::size_t>(r_.pair_second(i));
      y[a] = x[a] * std::cos(t) - x[b] * std::sin(t);
      y[b] = x[a] * std::sin(t) + x[b] * std::cos(t);
    }
    return y;
  }

 private:
  RopeParams r_;
  std::vector<double> inv_freq_;
  double factor_ = 1;
};

// v scaled so that its largest element is `largest` (at most 31/8), rounded to multiples of
// 2^-5: at most 7 significant bits, 0 or inside f16's normal range, so exact in every format.
std::vector<double> coarse(const std::vector<long double>& v, long double largest) {
  long double top = 0;
  for (auto x : v) top = std::max(top, std::fabs(x));
  std::vector<double> out;
  for (auto x : v) out.push_back(std::ldexp(std::nearbyint(static_cast<double>(std::ldexp(x * largest / top, 5))), -5));
  return out;
}

long double approx_scale(const AttentionParams& p) {
  return p.scale ? *p.scale : 1 / std::sqrt(static_cast<long double>(p.head_dim));
}

// Row (i, h) of q, row (j, g) of k or v, as a span into the case.
std::span<double> q_row(VectorCase& c, const AttentionParams& p, std::int64_t i, std::int64_t h) {
  return std::span(c.attention.q).subspan(static_cast<std::size_t>((i * p.query_heads + h) * p.head_dim),
                                          static_cast<std::size_t>(p.head_dim));
}
std::span<double> k_row(VectorCase& c, const AttentionParams& p, std::int64_t j, std::int64_t g) {
  return std::span(c.attention.k).subspan(static_cast<std::size_t>((j * p.kv_heads + g) * p.head_dim),
                                          static_cast<std::size_t>(p.head_dim));
}
std::span<double> v_row(VectorCase& c, const AttentionParams& p, std::int64_t j, std::int64_t g) {
  return std::span(c.attention.v).subspan(static_cast<std::size_t>((j * p.kv_heads + g) * p.value_dim),
                                          static_cast<std::size_t>(p.value_dim));
}

void assign(std::span<double> to, std::span<const double> from) { std::copy(from.begin(), from.end(), to.begin()); }
std::vector<double> copy_of(std::span<const double> x) { return {x.begin(), x.end()}; }

// The logits of query row 0, head 0, in long double (to check that a case is what its flags
// say; single-axis RoPE or none, no ALiBi).
std::vector<long double> approx_logits(const VectorCase& c, const AttentionParams& p) {
  const auto d = static_cast<std::size_t>(p.head_dim);
  const std::span<const double> q(c.attention.q.data(), d);
  const long double scale = approx_scale(p);
  std::optional<ApproxRope> rope;
  if (p.rope) rope.emplace(*p.rope);
  std::vector<long double> out;
  for (std::int64_t j = 0; j < c.attention.keys; ++j) {
    const std::span<const double> k(&c.attention.k[static_cast<std::size_t>(j * p.kv_heads) * d], d);
    std::vector<long double> turned(k.begin(), k.end());
    long double m = 1;
    if (rope) {
      turned = rope->rotate(k, c.attention.key_positions[static_cast<std::size_t>(j)] - c.attention.query_positions[0]);
      m = rope->factor();
    }
    long double dot = 0;
    for (std::size_t e = 0; e < d; ++e) dot += q[e] * turned[e];
    out.push_back(scale * m * m * dot);
  }
  return out;
}

// Keys `tied` (at one position) of KV head 0 made equal and parallel to query row 0 head 0 once
// both are rotated, scaled so that their logit leads every other key's by about `lead`.
void make_dominant(VectorCase& c, const AttentionParams& p, const std::vector<std::int64_t>& tied, long double lead) {
  const auto q = copy_of(q_row(c, p, 0, 0));
  std::vector<long double> direction(q.begin(), q.end());
  long double m = 1;
  if (p.rope) {
    const ApproxRope rope(*p.rope);
    direction = rope.rotate(q, c.attention.query_positions[0] - c.attention.key_positions[static_cast<std::size_t>(tied[0])]);
    m = rope.factor();
  }
  const auto s = approx_logits(c, p);
  long double others = 0;
  for (std::size_t j = 0; j < s.size(); ++j) {
    if (std::find(tied.begin(), tied.end(), static_cast<std::int64_t>(j)) == tied.end()) others = std::max(others, s[j]);
  }
  // The aligned key's logit is scale m^2 |q| |k|, |k| = |q| times its largest element over q's.
  long double norm2 = 0, top = 0;
  for (auto x : direction) norm2 += x * x, top = std::max(top, std::fabs(x));
  const long double per_unit = approx_scale(p) * m * m * norm2 / top;
  const auto k = coarse(direction, std::clamp((others + lead) / per_unit, 1.0L, 3.875L));
  for (std::int64_t j : tied) assign(k_row(c, p, j, 0), k);
}

// A catalogue mistake stops generation: the case is not what its flags say.
void require(bool holds, const VectorCase& c, const std::string& what) {
  if (!holds) {
    throw std::logic_error("posenc generate: attention/conditioning, case \"" + c.comment + "\": " + what);
  }
}

// The smallest gap between the logit of any key in `dominant` and any other key's.
long double dominance(const VectorCase& c, const AttentionParams& p, const std::vector<std::int64_t>& dominant) {
  const auto s = approx_logits(c, p);
  long double low = INFINITY, others = -INFINITY;
  for (std::size_t j = 0; j < s.size(); ++j) {
    const bool is_dominant = std::find(dominant.begin(), dominant.end(), static_cast<std::int64_t>(j)) != dominant.end();
    if (is_dominant) low = std::min(low, s[j]);
    else others = std::max(others, s[j]);
  }
  return low - others;
}

void require_logit_range(const VectorCase& c, double least) {
  for (double r : c.attention.logit_range) require(r >= least, c, "a row's logit range " + decimal(r) + " < " + decimal(least));
}

// Every O element of head 0 with sum_j p_j |v_j| >= ratio |O|.
void require_cancellation(const VectorCase& c, const AttentionParams& p, double ratio) {
  for (std::int64_t k = 0; k < p.value_dim; ++k) {
    const auto e = static_cast<std::size_t>(k);  // query row 0, head 0
    const double o = std::fabs(to_double(Format::f64, c.expected.of(Format::f64)[e]));
    require(c.attention.pv[e] >= ratio * o, c, "P|V| / |O| below " + decimal(ratio) + " at element " + std::to_string(k));
  }
}

Shape keys_at(std::int64_t query_position, std::vector<std::int64_t> key_positions) {
  Shape s{1, static_cast<std::int64_t>(key_positions.size()), {query_position}, std::move(key_positions)};
  return s;
}

// A recent window of n keys ending at `last`, after a key at `first`.
std::vector<std::int64_t> window_after(std::int64_t first, std::int64_t n, std::int64_t last) {
  std::vector<std::int64_t> out{first};
  for (std::int64_t j = last - n + 1; j <= last; ++j) out.push_back(j);
  return out;
}

}  // namespace

// Rows whose softmax is ill-conditioned or degenerate, where a careless kernel's error shows and
// where the reference's certification is hardest (near ties put O near a rounding midpoint).
VectorFile conditioning_file() {
  FileBuilder b("attention", "conditioning", 5005);
  describe_attention_flags(b);
  const auto p = attention(32, 2, 1, llama_rope(32, 10000));
  const auto plain = attention(16, 2, 1, std::nullopt);

  // Large ranges: the weights span e^-30 and more, so exp's argument and the max subtraction
  // matter and a logit's error moves O by up to its size times kappa.
  b.group(CaseType::attention, p, "logit ranges of 30 and more (q times 2^2 or 2^3), Llama-style RoPE, " + heads_text(p),
          kCommonGrid);
  for (auto [keys, last, shift] : {std::tuple{16, std::int64_t{15}, 3}, std::tuple{64, std::int64_t{1} << 20, 2},
                                   std::tuple{64, kMaxInt32, 3}}) {
    const auto& c = b.add(random_case(b, p, decode(keys, last - keys + 1),
                                      std::to_string(keys) + " keys ending at " + std::to_string(last) + ", q times 2^" +
                                          std::to_string(shift),
                                      {"Decode", "GroupedQuery", "LargeLogitRange"}, shift));
    require_logit_range(c, 30);
  }
  b.group(CaseType::attention, plain, "logit ranges of 30 and more without a positional encoding, " + heads_text(plain),
          kCommonGrid);
  require_logit_range(b.add(random_case(b, plain, decode(48, 0), "48 keys, q times 2^3",
                                        {"Decode", "GroupedQuery", "LargeLogitRange"}, 3)),
                      30);

  // Near ties, unrotated so that the logits are exact and their difference known: q is 8 on dim 0
  // and 2^-9 on dim 1, keys 0 and 1 are 31/8 on dim 0 (every other key at most 2 there) and 3/2
  // and 3/2 + 2^-7 on dim 1 (every other key at most 1 on dim 0), so their logits differ by
  // 2^-2 * 2^-9 * 2^-7 = 2^-18 and lead the rest by 4 or more. With two keys O_0 is
  // 1 + 2^-8 + 2^-27, from values 1 and 1 + 2^-7: 2^-27 above a bf16 rounding midpoint.
  const auto near = attention(16, 1, 1, std::nullopt);
  b.group(CaseType::attention, near, "near ties: two leading keys whose logits differ by 2^-18, " + heads_text(near),
          kCommonGrid);
  for (std::int64_t keys : {2, 8}) {
    VectorCase c = random_case(b, near, decode(keys, 0), std::to_string(keys) + " keys, keys 0 and 1 tied to 2^-18",
                               {"Decode", "NearTie"});
    std::fill(c.attention.q.begin(), c.attention.q.end(), 0.0);
    c.attention.q[0] = 8;
    c.attention.q[1] = 0x1p-9;
    for (std::int64_t j = 0; j < keys; ++j) k_row(c, near, j, 0)[0] = std::ldexp(k_row(c, near, j, 0)[0], -2);
    for (std::int64_t j : {0, 1}) k_row(c, near, j, 0)[0] = 3.875;
    k_row(c, near, 0, 0)[1] = 1.5;
    k_row(c, near, 1, 0)[1] = 1.5 + 0x1p-7;
    v_row(c, near, 0, 0)[0] = 1.0;
    v_row(c, near, 1, 0)[0] = 1.0 + 0x1p-7;
    require(dominance(c, near, {0, 1}) >= 4, c, "keys 0 and 1 do not lead by 4");
    b.add(std::move(c));
  }
  // Rotated: q at 2^-10 of the grid keeps every logit within 2^-4 of 0, and two keys at one
  // position one grid step apart have logits about 2^-18 apart.
  b.group(CaseType::attention, p, "near ties with RoPE: q times 2^-10, keys 3 and 4 at one position one grid step apart, " +
                                      heads_text(p),
          kCommonGrid);
  for (std::int64_t last : {std::int64_t{15}, std::int64_t{1} << 24}) {
    VectorCase c = random_case(b, p, decode(16, last - 15), "16 keys ending at " + std::to_string(last),
                               {"Decode", "GroupedQuery", "NearTie"}, -10);
    c.attention.key_positions[4] = c.attention.key_positions[3];
    assign(k_row(c, p, 4, 0), copy_of(k_row(c, p, 3, 0)));
    double& x = k_row(c, p, 4, 0)[0];
    x += std::ldexp(1.0, std::ilogb(x) - 7);  // one bf16 ulp
    b.add(std::move(c));
  }

  // Exact ties: equal logits in exact arithmetic.
  b.group(CaseType::attention, plain, "exact ties without a positional encoding, " + heads_text(plain), kCommonGrid);
  {
    VectorCase c = random_case(b, plain, decode(8, 0), "8 keys, keys 0, 1 and 2 equal and aligned with q (tied, leading)",
                               {"Decode", "GroupedQuery", "ExactTie"}, 1);
    make_dominant(c, plain, {0, 1, 2}, 6);
    require(dominance(c, plain, {0, 1, 2}) >= 5, c, "the tied keys do not lead by 5");
    b.add(std::move(c));
    for (std::int64_t keys : {3, 5}) {
      VectorCase z = random_case(b, plain, decode(keys, 0),
                                 std::to_string(keys) + " keys, q = 0: every logit 0, O the mean of v, L = ln " +
                                     std::to_string(keys),
                                 {"Decode", "GroupedQuery", "ExactTie"});
      std::fill(z.attention.q.begin(), z.attention.q.end(), 0.0);
      b.add(std::move(z));
    }
  }
  b.group(CaseType::attention, p, "exact ties with RoPE: two equal keys at one position, aligned with q, " + heads_text(p),
          kCommonGrid);
  for (std::int64_t last : {std::int64_t{31}, std::int64_t{1} << 20}) {
    VectorCase c = random_case(b, p, decode(32, last - 31), "32 keys ending at " + std::to_string(last) +
                                                                ", keys 7 and 8 equal at position " +
                                                                std::to_string(last - 24),
                               {"Decode", "GroupedQuery", "ExactTie"}, 1);
    c.attention.key_positions[8] = c.attention.key_positions[7];
    make_dominant(c, p, {7, 8}, 6);
    require(dominance(c, p, {7, 8}) >= 5, c, "the tied keys do not lead by 5");
    b.add(std::move(c));
  }

  // Cancellation: two tied dominant keys with opposite values leave O = the small rest, so the
  // element's scale sum_j p_j |v_j| is far above |O| and only an error relative to that scale
  // can be asked for.
  b.group(CaseType::attention, p, "cancellation: two equal dominant keys with opposite values, " + heads_text(p),
          kCommonGrid);
  for (std::int64_t last : {std::int64_t{63}, (std::int64_t{1} << 24) + 1000, kMaxInt32}) {
    VectorCase c = random_case(b, p, decode(64, last - 63),
                               "64 keys ending at " + std::to_string(last) + ", keys 10 and 11 at one position, v11 = -v10",
                               {"Decode", "GroupedQuery", "ValueCancellation"}, 2);
    c.attention.key_positions[11] = c.attention.key_positions[10];
    make_dominant(c, p, {10, 11}, 10);
    for (std::size_t e = 0; e < static_cast<std::size_t>(p.value_dim); ++e) v_row(c, p, 11, 0)[e] = -v_row(c, p, 10, 0)[e];
    require(dominance(c, p, {10, 11}) >= 9, c, "the cancelling keys do not lead by 9");
    require_cancellation(b.add(std::move(c)), p, 64);
  }
  b.group(CaseType::attention, plain, "cancellation without a positional encoding, " + heads_text(plain), kCommonGrid);
  {
    VectorCase c = random_case(b, plain, decode(32, 0), "32 keys, keys 0 and 1 equal and aligned with q, v1 = -v0",
                               {"Decode", "GroupedQuery", "ValueCancellation"}, 3);
    make_dominant(c, plain, {0, 1}, 10);
    for (std::size_t e = 0; e < static_cast<std::size_t>(plain.value_dim); ++e) v_row(c, plain, 1, 0)[e] = -v_row(c, plain, 0, 0)[e];
    require(dominance(c, plain, {0, 1}) >= 9, c, "the cancelling keys do not lead by 9");
    require_cancellation(b.add(std::move(c)), plain, 64);
  }

  // Attention sinks (Xiao et al. 2023, "Efficient Streaming Language Models with Attention
  // Sinks"): the first token at position 0 and a recent window far from it; the sink is aligned
  // with the query so that it dominates across the whole distance.
  b.group(CaseType::attention, p, "attention sink: a key at position 0 aligned with a query at P, and 63 recent keys, " +
                                      heads_text(p),
          kCommonGrid);
  for (std::int64_t last : {std::int64_t{1} << 16, std::int64_t{1} << 20, kMaxInt32}) {
    VectorCase c = random_case(b, p, keys_at(last, window_after(0, 63, last)),
                               "the sink at 0, keys " + std::to_string(last - 62) + " .. " + std::to_string(last),
                               {"Decode", "GroupedQuery", "AttentionSink", "FarPositions"}, 1);
    make_dominant(c, p, {0}, 8);
    require(dominance(c, p, {0}) >= 7, c, "the sink does not lead by 7");
    b.add(std::move(c));
  }

  // One to three keys far from 0: the softmax of one key is 1 exactly (O = v), of two a logistic.
  b.group(CaseType::attention, p, "one, two and three keys at 2^31 - 1 and below, " + heads_text(p), kCommonGrid);
  for (std::int64_t keys : {1, 2, 3}) {
    std::vector<std::string> flags{"Decode", "GroupedQuery", "FarPositions"};
    if (keys == 1) flags.push_back("SingleKey");
    b.add(random_case(b, p, decode(keys, kMaxInt32 - keys + 1), std::to_string(keys) + " keys ending at 2147483647",
                      flags, 1));
  }

  // Thousands of keys with a sink: the sink's weight against a long tail of small ones.
  const auto many = attention(32, 2, 1, llama_rope(32, 500000));
  b.group(CaseType::attention, many, "a sink at position 0 and 2047 recent keys ending at 2^20, " + heads_text(many),
          kCommonGrid);
  {
    const std::int64_t last = std::int64_t{1} << 20;
    VectorCase c = random_case(b, many, keys_at(last, window_after(0, 2047, last)), "2048 keys",
                               {"Decode", "GroupedQuery", "AttentionSink", "ManyKeys", "FarPositions"}, 3);
    make_dominant(c, many, {0}, 8);
    require(dominance(c, many, {0}) >= 7, c, "the sink does not lead by 7");
    b.add(std::move(c));
  }

  // Appended (the tcIds before it stay; docs/mutation.md): uniform weights with two KV heads.
  // The exact ties above have one KV head, so a kernel's path for exactly equal weights could
  // read every query head's values from KV head 0 and pass them.
  b.note("UniformWeights",
         "q = 0 with 2 KV heads: every logit is exactly 0 and every weight exactly 1, so O is the mean of the values "
         "of each query head's own KV head (heads 2 and 3 read KV head 1)");
  const auto grouped = attention(16, 4, 2, std::nullopt);
  b.group(CaseType::attention, grouped, "uniform weights: q = 0, no positional encoding, " + heads_text(grouped),
          kCommonGrid);
  for (std::int64_t keys : {3, 5}) {
    VectorCase z = random_case(b, grouped, decode(keys, 0),
                               std::to_string(keys) + " keys, q = 0: every logit 0, O the mean of each KV head's v",
                               {"Decode", "GroupedQuery", "ExactTie", "UniformWeights"});
    std::fill(z.attention.q.begin(), z.attention.q.end(), 0.0);
    b.add(std::move(z));
  }
  return std::move(b).finish();
}

// The cos/sin rows as a kernel receives them when its table is an argument in the storage
// dtype (FlashAttention's flash_attn_with_kvcache rotary_cos/rotary_sin): the reference's rows
// correctly rounded to that format are inputs of the case, so the kernel is judged on its own
// arithmetic with that table, apart from how the table was made. Far positions, where a table
// made in binary32 would be wrong; the inputs q, k, v stay on the grid.
VectorFile tables_file() {
  FileBuilder b("attention", "tables", 5006);
  describe_attention_flags(b);
  auto with_table = [&](const AttentionParams& params, Format table_format, const Shape& s, const std::string& comment,
                        std::vector<std::string> flags) {
    VectorCase c = random_case(b, params, s, comment, std::move(flags), -2);
    const auto axes = static_cast<std::size_t>(params.position_axes());
    auto add_rows = [&](const std::vector<std::int64_t>& positions) {
      for (std::size_t t = 0; t < positions.size(); t += axes) {
        for (const auto& r : reference::rope_table_row(*params.rope, std::span(positions).subspan(t, axes))) {
          c.attention.table.push_back(r.as_double(table_format));
        }
      }
    };
    add_rows(c.attention.query_positions);
    add_rows(c.attention.key_positions);
    // Judged where every input, the table included, is exact (SPEC.md section 3).
    const auto judged = conformance::judged_formats(b.current_group(), c);
    if (judged.size() > 1 && judged.size() < std::size(kAllFormats)) c.flags.push_back("FormatSubset");
    b.add(std::move(c));
  };
  for (Format f : {Format::f32, Format::bf16, Format::f16}) {
    auto p = attention(64, 4, 2, llama_rope(64, 500000));
    p.rope_table_given = true;
    const std::string name(to_string(f));
    b.group(CaseType::attention, p,
            "the cos/sin table given in " + name + " (rope_table_given; rows of Llama-style RoPE, base 500000, "
            "correctly rounded to " + name + "), " + heads_text(p) + ", q times 2^-2; judged in f64 and the formats "
            "that hold every table value",
            kCommonGrid);
    for (std::int64_t last : {std::int64_t{1} << 20, (std::int64_t{1} << 24) + 1, kMaxInt32}) {
      with_table(p, f, decode(32, last - 31), "32 keys ending at " + std::to_string(last),
                 {"Decode", "GroupedQuery", "GivenTable", "FarPositions"});
    }
    with_table(p, f, prefill(8, 24, kMaxInt32 - 23), "the last 8 of 24 tokens ending at 2147483647",
               {"Prefill", "ChunkedPrefill", "GroupedQuery", "GivenTable", "FarPositions"});
  }
  // A table with an attention factor in it: gpt-oss's YaRN rows are m cos and m sin, m ~ 1.35.
  auto yarn = attention(64, 2, 1, published::gpt_oss());
  yarn.rope_table_given = true;
  b.group(CaseType::attention, yarn,
          "the cos/sin table given in bf16 for gpt-oss RoPE (yarn factor 32: rows m cos, m sin with m = 0.1 ln 32 + "
          "1), " + heads_text(yarn) + ", q times 2^-2",
          kCommonGrid);
  with_table(yarn, Format::bf16, decode(32, 131071 - 31), "32 keys ending at 131071",
             {"Decode", "GroupedQuery", "GivenTable", "ModelConfig"});
  return std::move(b).finish();
}

// One invalid case per rule of validate(AttentionParams, AttentionInputs) (spec/src/attention_params.cpp):
// the implementation must refuse each, naming the parameter (SPEC.md section 2.6).
VectorFile invalid_file() {
  FileBuilder b("attention", "invalid", 5007);
  describe_attention_flags(b);
  // A valid decode of 4 keys for p (inputs sized to it), to be broken by one change.
  auto base_case = [&](const AttentionParams& p, const std::string& comment) {
    AttentionParams sized = p;
    sized.head_dim = std::max<std::int64_t>(sized.head_dim, 0);
    sized.value_dim = std::max<std::int64_t>(sized.value_dim, 0);
    sized.query_heads = std::max<std::int64_t>(sized.query_heads, 0);
    sized.kv_heads = std::max<std::int64_t>(sized.kv_heads, 0);
    VectorCase c = random_case(b, sized, decode(4, 0, p.rope ? p.rope->position_axes() : 1), comment, {"InvalidParameter"});
    if (p.rope_table_given && p.rope) c.attention.table.assign(static_cast<std::size_t>(5 * 2 * p.rope->pair_count()), 0.5);
    return c;
  };
  auto refuse_params = [&](const AttentionParams& p, const std::string& comment, const std::string& parameter) {
    b.group(CaseType::attention, p, comment, kCommonGrid);
    b.add_invalid(base_case(p, comment), parameter);
  };
  const auto rope = llama_rope(8, 10000);
  const auto good = attention(8, 4, 2, rope);

  auto p = good;
  p.head_dim = 0;
  p.rope.reset();
  refuse_params(p, "head_dim 0", "attention.head_dim");
  p = good;
  p.value_dim = 0;
  refuse_params(p, "value_dim 0", "attention.value_dim");
  p = good;
  p.query_heads = 0;
  p.kv_heads = 0;
  refuse_params(p, "no query heads", "attention.query_heads");
  p = good;
  p.kv_heads = 8;
  refuse_params(p, "more KV heads (8) than query heads (4)", "attention.kv_heads");
  p = good;
  p.query_heads = 6;
  p.kv_heads = 4;
  refuse_params(p, "4 KV heads for 6 query heads (not a divisor: no contiguous groups)", "attention.kv_heads");
  p = good;
  p.rope->head_dim = p.rope->rotary_dim = 16;
  refuse_params(p, "rope head_dim 16 for attention head_dim 8", "attention.rope.head_dim");
  p = good;
  p.rope->base = 1.0;
  refuse_params(p, "the rope's own parameters are validated too (base 1)", "rope.base");
  p = attention(8, 4, 2, std::nullopt);
  p.rope_table_given = true;
  refuse_params(p, "rope_table_given without a rope", "attention.rope_table_given");
  p = attention(8, 4, 4, std::nullopt);
  p.alibi = AlibiParams{};
  p.alibi->n_heads = 8;
  refuse_params(p, "ALiBi with 8 heads for 4 query heads", "attention.alibi.n_heads");
  for (double bad : {0.0, -0.125}) {
    p = good;
    p.scale = bad;
    refuse_params(p, "scale " + decimal(bad) + " (must be > 0)", "attention.scale");
  }
  p = good;
  p.scale = 0.25;
  p.scale_denominator = 16.0;
  refuse_params(p, "both scale and scale_denominator (which one would be silently ignored)", "attention.scale_denominator");
  p = good;
  p.scale_denominator = 0.0;
  refuse_params(p, "scale_denominator 0", "attention.scale_denominator");
  p = good;
  p.rope->scaling.kind = RopeScalingKind::linear;
  p.rope->scaling.factor = 2.0;
  p.scale_mscale_all_dim = -1.0;
  refuse_params(p, "scale_mscale_all_dim -1", "attention.scale_mscale_all_dim");
  p = good;
  p.scale_mscale_all_dim = 0.707;
  refuse_params(p, "scale_mscale_all_dim without a rope scaling factor (its g(factor, mscale_all_dim) undefined)",
                "attention.scale_mscale_all_dim");

  // Inputs that do not fit valid parameters.
  b.group(CaseType::attention, good, "inputs that do not fit valid parameters, " + heads_text(good), kCommonGrid);
  auto refuse = [&](VectorCase c, const std::string& parameter) { b.add_invalid(std::move(c), parameter); };
  {
    VectorCase c = base_case(good, "no query rows");
    c.attention.queries = 0;
    c.attention.query_positions.clear();
    c.attention.q.clear();
    refuse(std::move(c), "attention.queries");
  }
  {
    VectorCase c = base_case(good, "no keys");
    c.attention.keys = 0;
    c.attention.key_positions.clear();
    c.attention.k.clear();
    c.attention.v.clear();
    refuse(std::move(c), "attention.keys");
  }
  {
    VectorCase c = base_case(good, "3 key positions for 4 keys (never padded)");
    c.attention.key_positions.pop_back();
    refuse(std::move(c), "attention.key_positions");
  }
  {
    VectorCase c = base_case(good, "2 query positions for 1 query row");
    c.attention.query_positions.push_back(3);
    refuse(std::move(c), "attention.query_positions");
  }
  for (const char* tensor : {"q", "k", "v"}) {
    VectorCase c = base_case(good, std::string("one value short in ") + tensor + " (never padded)");
    auto& x = tensor[0] == 'q' ? c.attention.q : tensor[0] == 'k' ? c.attention.k : c.attention.v;
    x.pop_back();
    refuse(std::move(c), std::string("attention.") + tensor);
  }
  for (double bad : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    VectorCase c = base_case(good, "q[5] = " + decimal(bad));
    c.attention.q[5] = bad;
    refuse(std::move(c), "attention.q[5]");
  }
  {
    VectorCase c = base_case(good, "k[9] infinite");
    c.attention.k[9] = std::numeric_limits<double>::infinity();
    refuse(std::move(c), "attention.k[9]");
  }
  {
    VectorCase c = base_case(good, "v[0] NaN");
    c.attention.v[0] = std::numeric_limits<double>::quiet_NaN();
    refuse(std::move(c), "attention.v[0]");
  }
  // A mask with a causal or no mask, and a table without rope_table_given, are refused too, but a
  // file cannot hold them (its tensor file keeps a mask for explicit masks and a table for given
  // tables only): tests/unit/validation_test.cpp checks those two rules.

  auto prefill_params = good;
  b.group(CaseType::attention, prefill_params, "a causal block with more queries than keys, " + heads_text(good),
          kCommonGrid);
  {
    VectorCase c = random_case(b, good, prefill(4, 4, 0), "5 queries over 4 keys (the queries are the last tokens)",
                               {"InvalidParameter"});
    c.attention.queries = 5;
    c.attention.query_positions.push_back(4);
    const auto extra = grid(b.rng(), good.query_heads * good.head_dim);
    c.attention.q.insert(c.attention.q.end(), extra.begin(), extra.end());
    refuse(std::move(c), "attention.queries");
  }

  auto masked = good;
  masked.mask = AttentionMask::explicit_;
  b.group(CaseType::attention, masked, "explicit masks, " + heads_text(masked), kCommonGrid);
  {
    VectorCase c = random_case(b, masked, prefill(2, 4, 0), "row 1 sees no key (a softmax over nothing)",
                               {"InvalidParameter"});
    c.attention.mask = {1, 1, 1, 0, 0, 0, 0, 0};
    refuse(std::move(c), "attention.mask");
  }
  {
    VectorCase c = random_case(b, masked, prefill(2, 4, 0), "a mask of 7 values for 2 x 4", {"InvalidParameter"});
    c.attention.mask = {1, 1, 1, 0, 1, 1, 1};
    refuse(std::move(c), "attention.mask");
  }
  {
    VectorCase c = random_case(b, masked, prefill(2, 4, 0), "a mask value 2 (only 0 and 1)", {"InvalidParameter"});
    c.attention.mask = {1, 1, 1, 0, 1, 2, 1, 1};
    refuse(std::move(c), "attention.mask[5]");
  }

  auto given = good;
  given.rope_table_given = true;
  b.group(CaseType::attention, given, "given cos/sin tables, " + heads_text(given), kCommonGrid);
  {
    VectorCase c = base_case(given, "a table of 4 rows for 1 query and 4 keys");
    c.attention.table.resize(4 * 8);
    refuse(std::move(c), "attention.table");
  }
  {
    VectorCase c = base_case(given, "a table value NaN");
    c.attention.table[3] = std::numeric_limits<double>::quiet_NaN();
    refuse(std::move(c), "attention.table[3]");
  }

  auto alibi = attention(8, 4, 4, std::nullopt, AttentionMask::none);
  alibi.alibi = AlibiParams{};
  alibi.alibi->n_heads = 4;
  b.group(CaseType::attention, alibi, "causal ALiBi without a mask, " + heads_text(alibi), kCommonGrid);
  {
    VectorCase c = random_case(b, alibi, keys_at(2, {0, 1, 2, 3}), "a visible key after the query (key at 3, query at 2)",
                               {"InvalidParameter"});
    refuse(std::move(c), "attention.alibi.key_position");
  }
  {
    VectorCase c = random_case(b, alibi, keys_at((std::int64_t{1} << 53) + 2, {0, 1, 2, 3}),
                               "an ALiBi query position above 2^53", {"InvalidParameter"});
    refuse(std::move(c), "attention.alibi.query_position");
  }
  // Last, so that the tcIds before it stay.
  auto deepseek = attention(8, 4, 2, rope);
  deepseek.rope->scaling.kind = RopeScalingKind::linear;
  deepseek.rope->scaling.factor = 4.0;
  deepseek.scale = 0.25;
  deepseek.scale_mscale_all_dim = 0.707;
  refuse_params(deepseek, "scale_mscale_all_dim with an explicit scale (the correction applies to 1/sqrt(d) only)",
                "attention.scale_mscale_all_dim");
  return std::move(b).finish();
}

}  // namespace posenc::generator::attention_cases
