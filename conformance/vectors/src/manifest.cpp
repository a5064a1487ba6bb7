#include "posenc/vectors/manifest.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <iomanip>
#include <sstream>

#include "posenc/vectors/vector_json.hpp"

namespace posenc::conformance {

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw Error("posenc: SHA-256 failed");
  }
  std::ostringstream hex;
  for (unsigned int i = 0; i < length; ++i) hex << std::hex << std::setw(2) << std::setfill('0') << int{digest[i]};
  return hex.str();
}

std::string format_manifest(const std::vector<ManifestEntry>& entries) {
  std::string text = "# posenc golden vectors: SHA-256 of each file, its number of test cases, its path below vectors/\n";
  for (const auto& e : entries) text += e.sha256 + "  " + std::to_string(e.cases) + "  " + e.path + "\n";
  return text;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw VectorFileError(path.string() + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<ManifestEntry> read_manifest(const std::filesystem::path& dir) {
  const auto path = dir / "MANIFEST";
  std::istringstream lines(read_bytes(path));
  std::vector<ManifestEntry> out;
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    ManifestEntry e;
    std::string extra;
    if (!(fields >> e.sha256 >> e.cases >> e.path) || (fields >> extra) || e.sha256.size() != 64 ||
        e.sha256.find_first_not_of("0123456789abcdef") != std::string::npos || e.cases < 0) {
      throw VectorFileError(path.string() + ": line " + std::to_string(number) +
                            ": expected 'SHA256  CASES  PATH', got '" + line + "'");
    }
    out.push_back(e);
  }
  return out;
}

std::vector<ManifestEntry> read_checked_manifest(const std::filesystem::path& dir, const std::string& expected_sha256) {
  if (!expected_sha256.empty()) {
    const auto actual = sha256_hex(read_bytes(dir / "MANIFEST"));
    if (actual != expected_sha256) {
      throw VectorFileError((dir / "MANIFEST").string() + ": SHA-256 " + actual + " is not that of the vectors this posenc " +
                            "ships (" + expected_sha256 + "): refused (--own-vectors runs on vectors of your own)");
    }
  }
  const auto manifest = read_manifest(dir);
  // A tensor file belongs to the listed JSON file of its name, which records its SHA-256.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const auto extension = entry.path().extension();
    if (!entry.is_regular_file() || (extension != ".json" && extension != ".safetensors")) continue;
    auto relative = std::filesystem::relative(entry.path(), dir).generic_string();
    if (relative.rfind("schema/", 0) == 0) continue;
    if (extension == ".safetensors") relative = relative.substr(0, relative.size() - extension.string().size()) + ".json";
    bool listed = false;
    for (const auto& m : manifest) listed = listed || m.path == relative;
    if (!listed) throw VectorFileError(entry.path().string() + ": not listed in MANIFEST (refused)");
  }
  return manifest;
}

VectorFile load_listed_file(const std::filesystem::path& dir, const ManifestEntry& entry) {
  const auto path = dir / entry.path;
  const std::string text = read_bytes(path);
  if (sha256_hex(text) != entry.sha256) {
    throw VectorFileError(path.string() + ": SHA-256 differs from MANIFEST (modified or truncated; refused)");
  }
  VectorFile file = parse_vector_file(text, path.string(), tensors_beside(path));
  if (file.number_of_tests() != entry.cases) {
    throw VectorFileError(path.string() + ": " + std::to_string(file.number_of_tests()) + " cases, MANIFEST says " +
                          std::to_string(entry.cases));
  }
  return file;
}

}  // namespace posenc::conformance
