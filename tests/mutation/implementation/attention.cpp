// Attention with RoPE or ALiBi inside (SPEC.md section 2.7) in long double: O of every (query
// row, query head), then L of each.
#include "long_double.hpp"
#include "posenc/reference/attention.hpp"

namespace posenc::mutation {

Answer attention(const AttentionParams& p, const AttentionInputs& in) {
  return answer([&] {
    validate(p, in);
    const auto context = ref::attention_context<L>(p, in);
    const auto dv = static_cast<std::size_t>(p.value_dim);
    std::vector<long double> o, l;
    for (std::int64_t i = 0; i < in.queries; ++i) {
      for (std::int64_t h = 0; h < p.query_heads; ++h) {
        reference::AttentionTerms terms;
        const auto row = values_of(ref::attention_row(p, in, context, i, h, terms));
        o.insert(o.end(), row.begin(), row.begin() + static_cast<std::ptrdiff_t>(dv));
        l.push_back(row.at(dv));
      }
    }
    o.insert(o.end(), l.begin(), l.end());
    return o;
  });
}

}  // namespace posenc::mutation

#include "applied.hpp"
