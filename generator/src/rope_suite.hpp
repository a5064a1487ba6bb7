#pragma once
// The standard set of groups for one RoPE configuration: frequencies, table rows over a position
// sweep, rotations with inputs on the common grid (and optionally of a format's full precision),
// and same-distance logits on the grid.
#include <string>
#include <vector>

#include "file_builder.hpp"

namespace posenc::generator {

struct RopeSuite {
  bool full_sweep = false;  // table rows and grid rotations over full_sweep(), else short_sweep()
  // When > 0, every position is below it: a dynamic or LongRoPE seq_len, which Hugging Face sets
  // to the largest position of the forward + 1. The sweep is cut there and below - 1 is added.
  std::int64_t below = 0;
  // Besides the rotation group on the common grid (judged in every format), one group per format
  // here with inputs of that format's full precision (judged in the formats that hold them).
  std::vector<Format> full_precision_formats;
  bool table = true;
  bool dots = true;
  std::vector<std::string> flags;                    // added to every case (e.g. ModelConfig)
  // When not empty, these positions replace the sweep and these (m, n) pairs the logit pairs
  // (a model's own context: model_vectors.cpp). `below` still applies.
  std::vector<std::int64_t> sweep;
  std::vector<std::pair<std::int64_t, std::int64_t>> dot_pairs;
};

inline RopeSuite suite(std::vector<std::string> flags, bool full_sweep = false) {
  RopeSuite s;
  s.flags = std::move(flags);
  s.full_sweep = full_sweep;
  return s;
}

void add_rope_suite(FileBuilder& b, const RopeParams& p, const std::string& what, const RopeSuite& s);

// The position of a token whose every M-RoPE axis is `position` (a text token in Qwen2-VL).
std::vector<std::int64_t> same_on_all_axes(const RopeParams& p, std::int64_t position);

}  // namespace posenc::generator
