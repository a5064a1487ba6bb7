#include "posenc/generator/model_vectors.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "catalog.hpp"
#include "rope_suite.hpp"

namespace posenc::generator {

std::vector<std::int64_t> model_positions(const ModelRope& m) {
  if (m.max_positions < 1) throw InvalidParameter("hf_config.max_position_embeddings", "(missing)", "an integer >= 1");
  std::vector<std::int64_t> p{0, 1, 2, 3};
  for (int k = 2; k < 62; ++k) {
    const std::int64_t two_k = std::int64_t{1} << k;
    p.insert(p.end(), {two_k - 1, two_k, two_k + 1});
    if (two_k > m.context()) break;
  }
  auto around = [&](std::int64_t n) { p.insert(p.end(), {n - 1, n, n + 1}); };
  around(m.max_positions);
  if (m.context() > m.max_positions) around(m.context());
  if (m.params.scaling.original_max_positions) around(*m.params.scaling.original_max_positions);
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  std::erase_if(p, [](std::int64_t v) { return v < 0; });
  return p;
}

std::int64_t ModelRope::context() const {
  const RopeScaling& s = params.scaling;
  if (s.kind == RopeScalingKind::dynamic || !s.factor || !s.original_max_positions) return max_positions;
  const double scaled = *s.factor * static_cast<double>(*s.original_max_positions);
  // A factor below 1 or a scaled context past 2^53 adds nothing the sweep could reach.
  if (!(scaled > static_cast<double>(max_positions)) || scaled > 9007199254740992.0) return max_positions;
  return static_cast<std::int64_t>(std::ceil(scaled));
}

std::vector<conformance::VectorFile> model_vectors(const ModelRope& m) {
  const auto positions = model_positions(m);
  FileBuilder b("rope", m.name, 3001);
  describe_flags(b);
  RopeSuite s = suite({"ModelConfig"});
  s.sweep = positions;
  // Same-distance logits: near 0, at the original length and past the context.
  const std::int64_t last = positions.back();
  s.dot_pairs = {{5, 3}, {m.max_positions + 1, m.max_positions - 1}, {last, last - 2}};
  if (auto o = m.params.scaling.original_max_positions) s.dot_pairs.insert(s.dot_pairs.begin() + 1, {*o + 1, *o - 1});
  const std::string& what = m.description;
  const auto kind = m.params.scaling.kind;
  if (kind != RopeScalingKind::dynamic && kind != RopeScalingKind::longrope) {
    add_rope_suite(b, m.params, what, s);
    return {std::move(b).finish()};
  }
  // Two forward lengths: the original (dynamic: equal to no scaling; longrope: short factors)
  // and past the context (dynamic: the grown base; longrope: long factors).
  const std::int64_t original = *m.params.scaling.original_max_positions;
  for (std::int64_t seq_len : {original, last + 1}) {
    RopeParams p = m.params;
    p.scaling.seq_len = seq_len;
    RopeSuite g = s;
    g.below = seq_len;
    std::erase_if(g.dot_pairs, [&](auto pair) { return pair.first >= seq_len; });
    if (g.dot_pairs.empty()) g.dot_pairs = {{seq_len - 1, seq_len - 3}};
    add_rope_suite(b, p, what + ", seq_len " + std::to_string(seq_len) + " (every position below it)", g);
  }
  return {std::move(b).finish()};
}

}  // namespace posenc::generator
