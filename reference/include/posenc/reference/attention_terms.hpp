#pragma once
// What the reference gives beside an attention row's certified outputs: the ingredients of its
// error bound (SPEC.md section 5), which need no certification and are rounded up to binary64.
#include <vector>

namespace posenc::reference {

// One (query row, query head): per output column k, kappa = sum_j p_j |v_jk - O_k| (how far a
// change of the softmax weights can move O_k) and pv = sum_j p_j |v_jk| (the scale of O_k's
// sums); and the range max_j s_j - min_j s_j of the row's logits over the keys it sees.
struct AttentionTerms {
  std::vector<double> kappa, pv;
  double logit_range = 0;
  friend bool operator==(const AttentionTerms&, const AttentionTerms&) = default;
};

}  // namespace posenc::reference

namespace posenc::ref {
using reference::AttentionTerms;
}  // namespace posenc::ref
