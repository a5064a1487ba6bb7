#pragma once
// What the attention files of the catalogue share (attention_vectors.cpp, attention_edge_vectors.cpp):
// parameter shorthands, the shapes of a decode step and a prefill block, random cases on the grid
// and the flags' meanings.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog.hpp"

namespace posenc::generator::attention_cases {

inline constexpr std::int64_t kMaxInt32 = 2147483647;

AttentionParams attention(std::int64_t head_dim, std::int64_t query_heads, std::int64_t kv_heads,
                          std::optional<RopeParams> rope, AttentionMask mask = AttentionMask::causal);
RopeParams llama_rope(std::int64_t head_dim, double base, RopeLayout layout = RopeLayout::half);

// Grid values (SPEC.md section 3) times 2^shift: still 8 significant bits, and inside f16's
// normal range for shift in [-10, 3], so exact in every format.
std::vector<double> grid(SplitMix64& rng, std::int64_t n, int shift = 0);

struct Shape {
  std::int64_t queries, keys;
  std::vector<std::int64_t> query_positions, key_positions;
};
// The positions of a decode step: keys at first .. first + keys - 1 (the cache and the new
// token), the query at the last of them, on every axis.
Shape decode(std::int64_t keys, std::int64_t first, std::int64_t axes = 1);
// A causal block: the last `queries` of `keys` tokens at first .. first + keys - 1.
Shape prefill(std::int64_t queries, std::int64_t keys, std::int64_t first);

// A case of that shape with random q, k, v on the grid, q times 2^q_shift, and the position
// flags of its largest position.
VectorCase random_case(FileBuilder& b, const AttentionParams& p, const Shape& s, std::string comment,
                       std::vector<std::string> flags, int q_shift = 0);

std::string heads_text(const AttentionParams& p);
// The flags of every attention file (a file keeps the notes of those it uses).
void describe_attention_flags(FileBuilder& b);

VectorFile conditioning_file();
VectorFile tables_file();
VectorFile invalid_file();

}  // namespace posenc::generator::attention_cases
