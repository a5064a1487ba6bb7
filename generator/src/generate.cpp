#include "posenc/generator/generate.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "catalog.hpp"
#include "posenc/conformance/vector_json.hpp"

namespace posenc::generator {
namespace {

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("posenc generate: SHA-256 failed");
  }
  std::ostringstream hex;
  for (unsigned int i = 0; i < length; ++i) hex << std::hex << std::setw(2) << std::setfill('0') << int{digest[i]};
  return hex.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("posenc generate: cannot write " + path.string());
}

}  // namespace

std::vector<conformance::VectorFile> build_all_vectors() {
  std::vector<conformance::VectorFile> all;
  for (auto build : {sinusoidal_vectors, rope_vectors, rope_scaling_vectors, alibi_vectors, learned_vectors}) {
    for (auto& f : build()) all.push_back(std::move(f));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.relative_path() < b.relative_path(); });
  return all;
}

void write_vectors(const std::vector<conformance::VectorFile>& files, const std::filesystem::path& out) {
  std::string manifest =
      "# posenc golden vectors: SHA-256 of each file, its number of test cases, its path below vectors/\n";
  for (const auto& f : files) {
    const std::string text = conformance::write_vector_file(f);
    write_file(out / f.relative_path(), text);
    manifest += sha256_hex(text) + "  " + std::to_string(f.number_of_tests()) + "  " + f.relative_path() + "\n";
  }
  write_file(out / "MANIFEST", manifest);
}

}  // namespace posenc::generator
