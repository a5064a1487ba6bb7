#pragma once
// What fast_test.cpp and attention_test.cpp (one test program) share: the RoPE they rotate with
// and the tensors' storage.
#include <cstdint>
#include <vector>

#include "posenc/fast/fast.hpp"

namespace posenc::fast::test_setup {

// YaRN on Llama 3's base (500000), factor 8, original 8192: the scaling with the most
// per-pair arithmetic, so a kernel bug in any of it shows.
inline RopeParams yarn_rope(RopeLayout layout, std::int64_t head_dim, std::int64_t rotary_dim) {
  RopeParams p;
  p.head_dim = head_dim;
  p.rotary_dim = rotary_dim;
  p.base = 500000;
  p.layout = layout;
  p.scaling.kind = RopeScalingKind::yarn;
  p.scaling.factor = 8;
  p.scaling.original_max_positions = 8192;
  return p;
}

// Tensors' bytes 64-byte aligned, as PyTorch's CPU allocator gives them.
using Bytes = std::vector<std::uint8_t, detail::LineAligned<std::uint8_t>>;

}  // namespace posenc::fast::test_setup
