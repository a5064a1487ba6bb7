#pragma once
// What the judge knows of a RoPE parameter set beyond the vectors: the frequencies and attention
// factor the reference certifies (rounded to binary64: they size tolerances) and each pair's
// scaling condition term (scaling_condition.hpp), kept per parameter set.
#include <cmath>
#include <vector>

#include "posenc/recent_values.hpp"
#include "posenc/reference/reference.hpp"
#include "posenc/params.hpp"
#include "scaling_condition.hpp"

namespace posenc::conformance {

struct RopeKnowledge {
  std::vector<double> inv_freq;
  std::vector<double> condition;  // per pair: the scaling's condition term (scaling_condition.hpp)
  double attention = 1;
};

inline RopeKnowledge compute_rope_knowledge(const RopeParams& p) {
  auto f = reference::rope_frequencies(p);
  RopeKnowledge k;
  for (std::size_t i = 0; i + 1 < f.size(); ++i) k.inv_freq.push_back(f[i].f64());
  k.attention = f.back().f64();
  k.condition = scaling_condition(p);
  return k;
}

// Kept per parameter set: a group's cases share one, and the runner judges each case once per
// format, so without this the certified frequencies would be recomputed for every case and format
// (the largest part of judging a RoPE file in a Release build, more under the sanitizers).
inline const RopeKnowledge& rope_knowledge(const RopeParams& p) {
  thread_local RecentValues<RopeParams, RopeKnowledge, 8> kept;
  return kept.get(p, compute_rope_knowledge);
}

// An angle t = p w formed in W: 6 + 2|ln w| units of u_W per unit |t| (SPEC.md section 5).
inline double angle_error(double w) { return 6 + 2 * std::fabs(std::log(w)); }

}  // namespace posenc::conformance
