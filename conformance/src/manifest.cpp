#include "posenc/conformance/manifest.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <iomanip>
#include <sstream>

#include "posenc/conformance/vector_json.hpp"

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

}  // namespace posenc::conformance
