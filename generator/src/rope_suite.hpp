#pragma once
// The standard set of groups for one RoPE configuration: frequencies, table rows over a position
// sweep, rotations with inputs exact in each storage format, and same-distance logits.
#include <string>
#include <vector>

#include "file_builder.hpp"

namespace posenc::generator {

struct RopeSuite {
  bool full_sweep = false;                           // table rows over full_sweep(), else short_sweep()
  std::vector<Format> rotate_formats{Format::f64};   // one rotate group per input format
  bool table = true;
  bool dots = true;
  std::vector<std::string> flags;                    // added to every case (e.g. ModelConfig)
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
