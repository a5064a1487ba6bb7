// Learned lookups (SPEC.md section 2.2): the row, copied.
#include "long_double.hpp"
#include "posenc/reference/learned.hpp"

namespace posenc::mutation {

Answer learned_lookup(const LearnedParams& p, std::span<const double> table, std::int64_t position) {
  return answer([&] {
    validate_learned_position(p, position);
    validate_input_vector("learned.table", table, p.parameter_count());
    const auto row = ref::learned_row(p, table, position);
    return std::vector<long double>(row.begin(), row.end());
  });
}

}  // namespace posenc::mutation

#include "applied.hpp"
