#include "check.hpp"
#include "posenc/params/learned.hpp"

namespace posenc {

void validate(const LearnedParams& p) {
  check::in_range("learned.max_positions", p.max_positions, 1, std::int64_t{1} << 32);
  check::in_range("learned.dim", p.dim, 1, std::int64_t{1} << 20);
}

void validate_learned_position(const LearnedParams& p, std::int64_t position) {
  validate(p);
  check::in_range("learned.position", position, 0, p.max_positions - 1);
}

}  // namespace posenc
