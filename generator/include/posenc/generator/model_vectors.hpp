#pragma once
// One model's golden vectors (`posenc generate --hf-config`): its RoPE's frequencies, table rows,
// rotations and logits, in its layout, at positions from 0 to past its context.
#include <cstdint>
#include <string>
#include <vector>

#include "posenc/params/rope.hpp"
#include "posenc/vectors/vectors.hpp"

namespace posenc::generator {

struct ModelRope {
  std::string name;         // the file's variant (rope/NAME.json): the model's name
  std::string description;  // named in every group comment, e.g. "meta-llama/Llama-3.1-8B"
  RopeParams params;        // scaling.seq_len empty: the groups set it (dynamic, longrope)
  std::int64_t max_positions = 0;  // max_position_embeddings, >= 1

  // The context the model is meant for: max_positions, or factor * original length when a
  // scaling says more (Qwen2.5's YaRN 4x on 32768 positions: 131072).
  std::int64_t context() const;
};

// Positions 0..3, 2^k - 1, 2^k, 2^k + 1 up to the first power of two past the context, and
// max_positions, the context and the original length (scaled models) with their neighbours.
std::vector<std::int64_t> model_positions(const ModelRope& m);

// One file, rope/NAME.json. Dynamic NTK and LongRoPE depend on the forward's length
// (HF: seq_len = max(position_ids) + 1), so they get two groups of each kind: one at the original
// length (positions below it) and one at the longest sweep position + 1.
std::vector<conformance::VectorFile> model_vectors(const ModelRope& m);

}  // namespace posenc::generator
