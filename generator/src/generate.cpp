#include "posenc/generator/generate.hpp"

#include <algorithm>
#include <fstream>
#include <future>
#include <stdexcept>

#include "catalog.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/vector_json.hpp"

namespace posenc::generator {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("posenc generate: cannot write " + path.string());
}

}  // namespace

std::vector<conformance::VectorFile> build_all_vectors() {
  // Each family's catalogue is independent and deterministic (its own seeds), so they run in
  // parallel: the attention files cost most of the time.
  std::vector<std::future<std::vector<conformance::VectorFile>>> parts;
  for (auto build : {attention_vectors, sinusoidal_vectors, rope_vectors, rope_scaling_vectors, alibi_vectors,
                     learned_vectors}) {
    parts.push_back(std::async(std::launch::async, build));
  }
  std::vector<conformance::VectorFile> all;
  for (auto& part : parts) {
    for (auto& f : part.get()) all.push_back(std::move(f));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.relative_path() < b.relative_path(); });
  return all;
}

void write_vectors(const std::vector<conformance::VectorFile>& files, const std::filesystem::path& out) {
  std::vector<conformance::ManifestEntry> manifest;
  for (const auto& f : files) {
    const std::string text = conformance::write_vector_file(f);
    write_file(out / f.relative_path(), text);
    if (f.has_tensors()) write_file(out / f.family / f.tensors_name(), conformance::write_tensor_file(f));
    manifest.push_back({conformance::sha256_hex(text), f.number_of_tests(), f.relative_path()});
  }
  write_file(out / "MANIFEST", conformance::format_manifest(manifest));
}

}  // namespace posenc::generator
