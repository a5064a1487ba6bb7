#include "hf_vectors.hpp"

#include <algorithm>
#include <cctype>
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

namespace {

constexpr const char* kNameRule =
    "a file name of letters, digits, '.', '_' and '-', not starting with '.', at most 100 characters "
    "(the vectors are rope/NAME.json)";

bool name_character(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-';
}

bool usable_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name[0] != '.' && std::all_of(name.begin(), name.end(), name_character);
}

// A name from the config, made usable: the part after the last '/' (a repository's or folder's
// own name), every other character replaced by '_'; "" when nothing usable is left.
std::string sanitized(std::string text) {
  while (!text.empty() && text.back() == '/') text.pop_back();
  if (const auto slash = text.find_last_of('/'); slash != std::string::npos) text.erase(0, slash + 1);
  for (char& ch : text) {
    if (!name_character(ch)) ch = '_';
  }
  return usable_name(text) ? text : "";
}

}  // namespace

std::string hf_vectors_name(const std::optional<std::string>& name, const models::HfRopeConfig& c,
                            const std::string& config_file) {
  if (name) {
    if (!usable_name(*name)) throw InvalidParameter("--name", "'" + *name + "'", kNameRule);
    return *name;
  }
  for (const std::string& candidate :
       {c.name_or_path.value_or(""), c.model_type, std::filesystem::path(config_file).stem().string()}) {
    if (auto usable = sanitized(candidate); !usable.empty()) return usable;
  }
  throw InvalidParameter("--name", "(missing)",
                         std::string("given when neither the _name_or_path and model_type of ") + config_file +
                             " nor its file name make a name: " + kNameRule);
}

std::vector<conformance::VectorFile> hf_config_vectors(const std::string& config_file,
                                                       const std::optional<std::string>& name) {
  const auto c = read_hf_config_with_notes(config_file);
  if (c.max_position_embeddings < 1) {
    throw InvalidParameter("hf_config.max_position_embeddings", "(missing)",
                           "an integer >= 1: the vectors' positions run past the model's context");
  }
  generator::ModelRope m;
  m.name = hf_vectors_name(name, c, config_file);
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
  generator::write_vectors(hf_config_vectors(*o.hf_config, o.hf_name), folder.path());
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
