// Attention transcribed a second time, in plain long double, straight from the definitions:
// Vaswani et al. 2017 eq. 1 with the max subtracted, RoFormer's rotation (Su et al. 2021, eq. 34)
// with cosl and sinl of p * base^(-2i/d), ALiBi's slopes as Press et al.'s get_slopes forms them,
// the causal mask aligned to the last key and contiguous GQA groups. The reference shares its
// rotation and ALiBi code with the other families; this independent transcription catches an
// attention formula copied wrong (a mask aligned top-left, KV heads interleaved, L in base 2).
//
// It runs on the inputs of every shipped attention case it can reach accurately: no rope scaling, one position
// axis, and rotations at positions below 2^12, where the long double angle p * theta is within
// 2^-52 of the exact one (at 2^31 its error would be 2^-33). Agreement is to 1e-15 of each
// element's scale (sum_j p_j |v_j| for O, max(1, |L|) for L): long double evaluation error is
// near 1e-17 there, far below any transcription error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "posenc/reference/reference.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/vector_json.hpp"

namespace posenc {
namespace {

using conformance::CaseType;
using conformance::VectorCase;
using conformance::VectorGroup;

const std::filesystem::path kVectors = POSENC_VECTORS_DIR;

// Press, Smith, Lewis 2022, get_slopes: 2^(-8/n) times itself per head for n a power of two;
// otherwise those of the largest power of two below n, then every other slope of twice that.
std::vector<long double> slopes(std::int64_t n) {
  auto power_of_two = [](std::int64_t m) {
    const long double start = std::pow(2.0L, -std::pow(2.0L, -(std::log2(static_cast<long double>(m)) - 3)));
    std::vector<long double> out;
    for (std::int64_t i = 0; i < m; ++i) out.push_back(start * std::pow(start, static_cast<long double>(i)));
    return out;
  };
  const auto closest = std::int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(n))));
  auto out = power_of_two(closest);
  if (closest == n) return out;
  const auto twice = slopes(2 * closest);
  for (std::int64_t i = 0; i < n - closest; ++i) out.push_back(twice[static_cast<std::size_t>(2 * i)]);
  return out;
}

struct Transcription {
  std::vector<long double> values;  // O then L
  bool reachable = true;
};

Transcription transcribe(const AttentionParams& p, const conformance::AttentionData& a) {
  Transcription t;
  const auto d = static_cast<std::size_t>(p.head_dim), dv = static_cast<std::size_t>(p.value_dim);
  // q or k row `token` (queries first, then keys) rotated at `position`.
  auto rotate = [&](const double* x, std::int64_t token, std::int64_t position) {
    std::vector<long double> y(x, x + d);
    if (!p.rope) return y;
    const RopeParams& r = *p.rope;
    const std::size_t pairs = static_cast<std::size_t>(r.rotary_dim / 2);
    for (std::size_t i = 0; i < pairs; ++i) {
      long double c = 0, s = 0;
      if (p.rope_table_given) {
        c = a.table[static_cast<std::size_t>(token) * 2 * pairs + i];
        s = a.table[static_cast<std::size_t>(token) * 2 * pairs + pairs + i];
      } else {
        const long double angle = static_cast<long double>(position) *
                                  std::pow(static_cast<long double>(r.base), -2.0L * static_cast<long double>(i) /
                                                                                 static_cast<long double>(r.rotary_dim));
        c = std::cos(angle);
        s = std::sin(angle);
      }
      const std::size_t first = r.layout == RopeLayout::interleaved ? 2 * i : i;
      const std::size_t second = r.layout == RopeLayout::interleaved ? 2 * i + 1 : i + pairs;
      y[first] = x[first] * c - x[second] * s;
      y[second] = x[first] * s + x[second] * c;
    }
    return y;
  };
  const long double scale =
      p.scale ? static_cast<long double>(*p.scale)
              : 1 / std::sqrt(p.scale_denominator ? static_cast<long double>(*p.scale_denominator)
                                                  : static_cast<long double>(p.head_dim));
  const auto slope = p.alibi ? slopes(p.alibi->n_heads) : std::vector<long double>{};
  std::vector<long double> o, l;
  const std::int64_t group = p.query_heads / p.kv_heads;
  for (std::int64_t i = 0; i < a.queries; ++i) {
    for (std::int64_t h = 0; h < p.query_heads; ++h) {
      const std::int64_t g = h / group;
      const auto q = rotate(&a.q[static_cast<std::size_t>((i * p.query_heads + h) * p.head_dim)], i,
                            a.query_positions[static_cast<std::size_t>(i)]);
      std::vector<long double> s;
      std::vector<std::int64_t> seen;
      for (std::int64_t j = 0; j < a.keys; ++j) {
        const bool visible = p.mask == AttentionMask::none     ? true
                             : p.mask == AttentionMask::causal ? j <= i + (a.keys - a.queries)
                                                               : a.mask[static_cast<std::size_t>(i * a.keys + j)] != 0;
        if (!visible) continue;
        const auto k = rotate(&a.k[static_cast<std::size_t>((j * p.kv_heads + g) * p.head_dim)], a.queries + j,
                              a.key_positions[static_cast<std::size_t>(j)]);
        long double dot = 0;
        for (std::size_t e = 0; e < d; ++e) dot += q[e] * k[e];
        long double logit = scale * dot;
        if (p.alibi) {
          const long double distance = static_cast<long double>(a.query_positions[static_cast<std::size_t>(i)]) -
                                       static_cast<long double>(a.key_positions[static_cast<std::size_t>(j)]);
          logit -= slope[static_cast<std::size_t>(h)] *
                   (p.alibi->mode == AlibiMode::symmetric ? std::fabs(distance) : distance);
        }
        s.push_back(logit);
        seen.push_back(j);
      }
      const long double top = *std::max_element(s.begin(), s.end());
      long double sum = 0;
      std::vector<long double> w;
      for (auto x : s) sum += w.emplace_back(std::exp(x - top));
      for (std::size_t k = 0; k < dv; ++k) {
        long double acc = 0;
        for (std::size_t n = 0; n < seen.size(); ++n) {
          acc += w[n] * a.v[static_cast<std::size_t>((seen[n] * p.kv_heads + g) * p.value_dim) + k];
        }
        o.push_back(acc / sum);
      }
      l.push_back(top + std::log(sum));
    }
  }
  t.values = o;
  t.values.insert(t.values.end(), l.begin(), l.end());
  return t;
}

bool reachable(const VectorGroup& g, const VectorCase& c) {
  const auto& p = std::get<AttentionParams>(g.params);
  if (!c.valid || p.scale_mscale_all_dim) return false;
  if (!p.rope) return true;
  const RopeParams& r = *p.rope;
  if (r.scaling.kind != RopeScalingKind::none || r.partial != PartialRotary::standard || !r.mrope_section.empty() ||
      r.inverse) {
    return false;
  }
  if (p.rope_table_given) return true;
  const auto far = [](std::int64_t x) { return std::llabs(x) >= 4096; };
  return std::none_of(c.attention.query_positions.begin(), c.attention.query_positions.end(), far) &&
         std::none_of(c.attention.key_positions.begin(), c.attention.key_positions.end(), far);
}

TEST(AttentionLongDouble, AgreesWithTheReferenceOnTheShippedCases) {
  int cases = 0;
  long double worst = 0;
  for (const auto& entry : conformance::read_manifest(kVectors)) {
    if (entry.path.rfind("attention/", 0) != 0) continue;
    const auto file = conformance::load_vector_file(kVectors / entry.path);
    for (const auto& g : file.groups) {
      for (const auto& c : g.tests) {
        if (!reachable(g, c)) continue;
        ++cases;
        const auto& p = std::get<AttentionParams>(g.params);
        const auto t = transcribe(p, c.attention);
        const auto r = reference::attention(p, c.attention.inputs());
        ASSERT_EQ(t.values.size(), r.values.size()) << entry.path << " tcId " << c.tc_id;
        const auto dv = static_cast<std::size_t>(p.value_dim);
        const std::size_t o_count = r.terms.size() * dv;
        for (std::size_t e = 0; e < t.values.size(); ++e) {
          const long double exact = std::strtold(r.values[e].exact.c_str(), nullptr);
          const long double scale = e < o_count ? static_cast<long double>(r.terms[e / dv].pv[e % dv])
                                                : std::max(1.0L, std::fabs(exact));
          const long double error = std::fabs(t.values[e] - exact) / scale;
          worst = std::max(worst, error);
          EXPECT_LE(error, 1e-15L) << entry.path << " tcId " << c.tc_id << " output " << e << ": long double "
                                   << static_cast<double>(t.values[e]) << ", reference " << r.values[e].exact;
        }
      }
    }
  }
  EXPECT_GE(cases, 40);
  std::cout << cases << " cases, worst error " << static_cast<double>(worst) << " of the element's scale\n";
}

}  // namespace
}  // namespace posenc
