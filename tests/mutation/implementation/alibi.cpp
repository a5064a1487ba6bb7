// ALiBi slopes and biases (SPEC.md section 2.5) in long double.
#include "long_double.hpp"
#include "posenc/reference/alibi.hpp"

namespace posenc::mutation {

Answer alibi_slopes(const AlibiParams& p) {
  return answer([&] {
    validate(p);
    return values_of(ref::alibi_slopes<L>(p));
  });
}

Answer alibi_bias(const AlibiParams& p, std::int64_t head, std::int64_t query, std::int64_t key) {
  return answer([&] {
    validate_alibi_head(p, head);
    validate_alibi_positions(p, query, key);
    return values_of(std::vector{ref::alibi_bias<L>(p, head, query, key)});
  });
}

}  // namespace posenc::mutation

#include "applied.hpp"
