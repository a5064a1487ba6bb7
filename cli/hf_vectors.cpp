#include "hf_vectors.hpp"

#include <cstdlib>
#include <iostream>

#include "posenc/errors.hpp"
#include "posenc/generator/generate.hpp"
#include "posenc/generator/model_vectors.hpp"
#include "posenc/models/hf_config.hpp"

namespace posenc::cli {

models::HfRopeConfig read_hf_config_with_notes(const std::string& config_file) {
  auto c = models::read_hf_config_file(config_file);
  for (const auto& u : c.unread) std::cerr << "posenc: note: " << config_file << ": " << u << "\n";
  return c;
}

std::vector<conformance::VectorFile> hf_config_vectors(const std::string& config_file) {
  const auto c = read_hf_config_with_notes(config_file);
  if (c.max_position_embeddings < 1) {
    throw InvalidParameter("hf_config.max_position_embeddings", "(missing)",
                           "an integer >= 1: the vectors' positions run past the model's context");
  }
  generator::ModelRope m;
  m.name = std::filesystem::path(config_file).stem().string();
  m.description = "Hugging Face config " + std::filesystem::path(config_file).filename().string() +
                  (c.model_type.empty() ? "" : " (model_type " + c.model_type + ")");
  m.params = c.params;
  m.max_positions = c.max_position_embeddings;
  return generator::model_vectors(m);
}

ConformOptions with_hf_config_vectors(const ConformOptions& o, const TemporaryFolder& folder) {
  const std::string with = "absent with --hf-config " + *o.hf_config + " (the vectors are generated from the config)";
  if (o.vectors != default_vectors_dir()) throw InvalidParameter("--vectors", "'" + o.vectors + "'", with);
  if (o.own_vectors) throw InvalidParameter("--own-vectors", "(given)", with);
  generator::write_vectors(hf_config_vectors(*o.hf_config), folder.path());
  ConformOptions generated = o;
  generated.vectors = folder.path().string();
  generated.own_vectors = true;
  return generated;
}

TemporaryFolder::TemporaryFolder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "posenc-hf-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw Error("cannot create a temporary folder " + pattern);
  path_ = pattern;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ignored;  // a destructor must not throw; a leftover folder is all that can go wrong
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace posenc::cli
