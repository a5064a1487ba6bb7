#include "config_section.hpp"

#include "posenc/errors.hpp"

namespace posenc::models {

std::string ConfigSection::spelling(const std::string& key) const {
  if (object_.contains(key)) return key;
  for (const auto& [alias, real] : aliases_) {
    if (key == alias && object_.contains(real)) return real;
    if (key == real && object_.contains(alias)) return alias;
  }
  return key;
}

bool ConfigSection::has(const std::string& key) const {
  auto it = object_.find(spelling(key));
  return it != object_.end() && !it->is_null();
}

const nlohmann::json* ConfigSection::get(const std::string& key) {
  read_.insert(spelling(key));
  auto it = object_.find(spelling(key));
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string ConfigSection::spelled(const std::string& key) const {
  auto it = object_.find(spelling(key));
  if (it == object_.end()) return "(missing)";
  std::string s = it->dump();
  // Long lists (LongRoPE factors) are named by their length.
  if (it->is_array() && s.size() > 60) return "(" + std::to_string(it->size()) + " values)";
  return s;
}

void ConfigSection::fail(const std::string& key, const std::string& allowed) const {
  throw InvalidParameter(name(key), spelled(key), allowed);
}

std::optional<double> ConfigSection::real(const std::string& key) {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) fail(key, "a number");
  return v->get<double>();
}

std::optional<std::int64_t> ConfigSection::integer(const std::string& key) {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) fail(key, "an integer");
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    fail(key, "an integer below 2^63");
  }
  return v->get<std::int64_t>();
}

std::optional<bool> ConfigSection::boolean(const std::string& key) {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) fail(key, "true or false");
  return v->get<bool>();
}

std::optional<bool> ConfigSection::truthy(const std::string& key) {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  if (!v->is_number()) fail(key, "true, false or a number (nonzero is true)");
  return v->get<double>() != 0.0;
}

std::optional<std::string> ConfigSection::text(const std::string& key) {
  const auto* v = get(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail(key, "a string");
  return v->get<std::string>();
}

std::vector<double> ConfigSection::reals(const std::string& key) {
  const auto* v = get(key);
  if (!v) return {};
  if (!v->is_array()) fail(key, "a list of numbers");
  std::vector<double> out;
  for (const auto& e : *v) {
    if (!e.is_number()) fail(key, "a list of numbers");
    out.push_back(e.get<double>());
  }
  return out;
}

std::vector<std::int64_t> ConfigSection::integers(const std::string& key) {
  const auto* v = get(key);
  if (!v) return {};
  if (!v->is_array()) fail(key, "a list of integers");
  std::vector<std::int64_t> out;
  for (const auto& e : *v) {
    if (!e.is_number_integer()) fail(key, "a list of integers");
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

const nlohmann::json* ConfigSection::object(const std::string& key) {
  const auto* v = get(key);
  if (v && !v->is_object()) fail(key, "a JSON object");
  return v;
}

}  // namespace posenc::models
