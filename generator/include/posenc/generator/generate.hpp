#pragma once
// The golden vectors: every file of vectors/, built from the catalogue and evaluated by the
// reference, and written deterministically (same commit, same bytes).
#include <filesystem>
#include <vector>

#include "posenc/vectors/vectors.hpp"

namespace posenc::generator {

std::vector<conformance::VectorFile> build_all_vectors();

// Writes each file to out/family/variant.json and out/MANIFEST (SHA-256, case count, path).
void write_vectors(const std::vector<conformance::VectorFile>& files, const std::filesystem::path& out);

}  // namespace posenc::generator
