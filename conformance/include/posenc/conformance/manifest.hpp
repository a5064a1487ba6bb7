#pragma once
// vectors/MANIFEST: the SHA-256, case count and path of every vector file. The suite checks a
// file's hash before it trusts the file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace posenc::conformance {

struct ManifestEntry {
  std::string sha256;
  std::int64_t cases = 0;
  std::string path;  // below the vectors folder
};

std::string sha256_hex(const std::string& bytes);
std::string format_manifest(const std::vector<ManifestEntry>& entries);
// Reads DIR/MANIFEST; a malformed line is a VectorFileError naming the line.
std::vector<ManifestEntry> read_manifest(const std::filesystem::path& dir);
std::string read_bytes(const std::filesystem::path& path);

}  // namespace posenc::conformance
