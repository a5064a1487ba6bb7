#pragma once
// The golden vectors of the model a Hugging Face config.json describes (--hf-config of generate,
// conform and verify), and the temporary folder conform and verify generate them into.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "judging_options.hpp"
#include "posenc/models/hf_config.hpp"
#include "posenc/vectors/vectors.hpp"

namespace posenc::cli {

// Reads the config; its unread keys are printed to stderr as notes (stdout stays the output).
models::HfRopeConfig read_hf_config_with_notes(const std::string& config_file);
// The name of a model's vectors, rope/NAME.json: `name` (--name) when given, refused
// (InvalidParameter naming --name) unless it is a usable file name; else the config's model, its
// _name_or_path's last path component, else its model_type, else the config file's stem, each
// with every character outside [A-Za-z0-9._-] replaced by '_'.
std::string hf_vectors_name(const std::optional<std::string>& name, const models::HfRopeConfig& c,
                            const std::string& config_file);
// The config's vectors (read_hf_config_with_notes): rope/NAME.json, NAME as hf_vectors_name says.
std::vector<conformance::VectorFile> hf_config_vectors(const std::string& config_file,
                                                       const std::optional<std::string>& name);

// A fresh folder under the system's temporary directory, removed with everything in it when this
// object goes (also when the run throws).
class TemporaryFolder;

// The options of a run with --hf-config: the model's vectors generated into `folder` and judged
// as the user's own. --vectors and --own-vectors would name other vectors, so they are refused.
ConformOptions with_hf_config_vectors(const ConformOptions& o, const TemporaryFolder& folder);

class TemporaryFolder {
 public:
  TemporaryFolder();
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace posenc::cli
