#pragma once
// One JSON object of a config.json, read key by key: each read is typed, an error names the key
// by its dotted path in the file, and the keys read are remembered so that the rest can be
// reported (HfRopeConfig::unread) instead of dropped.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace posenc::models {

class ConfigSection {
 public:
  // prefix: the dotted path of this object in the file ("" for the top level, "rope_scaling.").
  ConfigSection(const nlohmann::json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}

  // The key's dotted path in the file (text_config.rope_scaling.factor), and the name an error
  // gives it: hf_config.PATH.
  std::string path(const std::string& key) const { return prefix_ + spelling(key); }
  std::string name(const std::string& key) const { return "hf_config." + path(key); }
  // True when the key is there and not null. JSON null is absent, as transformers' getattr(...,
  // None) and dict.get() read it. Does not count as a read.
  bool has(const std::string& key) const;

  // Each returns empty when the key is absent (or null) and throws InvalidParameter when it holds
  // another type. Integers must be JSON integers (transformers' isinstance(..., int)).
  std::optional<double> real(const std::string& key);
  std::optional<std::int64_t> integer(const std::string& key);
  std::optional<bool> boolean(const std::string& key);
  // true/false, or a number read as Python's `if` reads it (nonzero is true).
  std::optional<bool> truthy(const std::string& key);
  std::optional<std::string> text(const std::string& key);
  std::vector<double> reals(const std::string& key);
  std::vector<std::int64_t> integers(const std::string& key);
  const nlohmann::json* object(const std::string& key);

  // The value as the file spells it (for messages); "(missing)" when absent.
  std::string spelled(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& allowed) const;
  void mark_read(const std::string& key) { read_.insert(spelling(key)); }

  // A config class's attribute_map (alias -> key, PretrainedConfig): a key absent from the file
  // is read under the other name of the pair, as transformers reads it.
  void set_aliases(std::vector<std::pair<std::string, std::string>> aliases) { aliases_ = std::move(aliases); }
  // The name the file gives the key: the key, or its alias when only that is present.
  std::string spelling(const std::string& key) const;

  // Keys not read, as "PATH.KEY = VALUE" (only those `relevant` accepts).
  template <class Pred>
  std::vector<std::string> unread(Pred relevant) const {
    std::vector<std::string> out;
    for (const auto& [key, value] : object_.items()) {
      if (!read_.contains(key) && relevant(key)) out.push_back(prefix_ + key + " = " + value.dump());
    }
    return out;
  }

 private:
  const nlohmann::json* get(const std::string& key);
  const nlohmann::json& object_;
  std::string prefix_;
  std::set<std::string> read_;
  std::vector<std::pair<std::string, std::string>> aliases_;
};

}  // namespace posenc::models
