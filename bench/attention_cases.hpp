#pragma once
#include <cstdint>
#include <string>

#include "posenc/fast/fast.hpp"

namespace posenc::bench {

// Decode attention (fast/attention.hpp) at Llama 3 8B's shape: one query token of 32 heads over a
// cache of `keys` slots of 8 KV heads, head_dim 128, the cache in f16 or bf16, q and the output
// in f32, RoPE inside (the query rotated, the new key rotated and appended).
struct DecodeCase {
  std::int64_t keys;
  fast::DType kv;
  int threads;
};
// attention/decode/NK/KV/THREADS
std::string name(const DecodeCase& c);

// Whether llama.cpp's flash attention module was built and loads (bench/ggml), and why not.
bool ggml_available(std::string& why);

// Paired ratios (paired.hpp) at 4K, 32K and 128K keys, f16 and bf16, 1 and 2 threads: the call
// against the machine's read of the same bytes (the cache's keys and values read once:
// roofs.hpp, read_loops and TwoThreadRead for 2 threads), paired/NAME/roof; against ggml's
// ggml_flash_attn_ext at the same shape, KV type and thread count, paired/NAME/ggml. And the
// fast path against the reference on a small shape (attention/fast/small, attention/reference/small).
void register_attention_cases();

}  // namespace posenc::bench
