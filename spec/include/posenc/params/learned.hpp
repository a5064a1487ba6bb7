#pragma once
// Learned absolute position embeddings (GPT-2, BERT): a [max_positions][dim] table of parameters.
#include <cstdint>

namespace posenc {

struct LearnedParams {
  std::int64_t max_positions = 0;  // >= 1
  std::int64_t dim = 0;            // >= 1

  std::int64_t parameter_count() const { return max_positions * dim; }
};

void validate(const LearnedParams& p);
// A lookup outside [0, max_positions) is an error: never clamped, wrapped or truncated.
void validate_learned_position(const LearnedParams& p, std::int64_t position);

}  // namespace posenc
