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

struct VectorFile;
// DIR/MANIFEST, after checking that its SHA-256 is `expected_sha256` (when not empty: the
// MANIFEST of the shipped vectors, so a file edited together with its MANIFEST line is refused
// too) and that every vector file under DIR (schemas aside) is listed: an extra file is refused
// (VectorFileError naming it), not silently skipped.
std::vector<ManifestEntry> read_checked_manifest(const std::filesystem::path& dir, const std::string& expected_sha256);
// The listed file, refused unless its SHA-256 and case count are the MANIFEST's.
VectorFile load_listed_file(const std::filesystem::path& dir, const ManifestEntry& entry);

}  // namespace posenc::conformance
