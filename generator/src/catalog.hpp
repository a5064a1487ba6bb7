#pragma once
// The catalogue of golden vectors, one function per family. Each returns finished files.
#include <vector>

#include "file_builder.hpp"

namespace posenc::generator {

std::vector<VectorFile> sinusoidal_vectors();
std::vector<VectorFile> rope_vectors();          // none, partial, proportional, mrope, invalid, nan
std::vector<VectorFile> rope_scaling_vectors();  // linear, ntk, dynamic, yarn, llama3, longrope
std::vector<VectorFile> alibi_vectors();
std::vector<VectorFile> learned_vectors();
std::vector<VectorFile> attention_vectors();

// Position sweeps. The full sweep: 0, 1, 2, 3, 7, 100, 2^k - 1, 2^k, 2^k + 1 for k = 11..24,
// 10^6 and 2^31 - 1. The short sweep keeps the cases where binary32 angle formation breaks.
std::vector<std::int64_t> full_sweep();
std::vector<std::int64_t> short_sweep();
std::vector<std::string> position_flags(std::int64_t position);
// Shortest decimal that reads back as the same double, for comments.
std::string decimal(double v);
// Registers the meaning of every flag the catalogue uses.
void describe_flags(FileBuilder& b);

}  // namespace posenc::generator
