#include "posenc/adapters/results_file.hpp"

#include <cmath>

#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/manifest.hpp"

namespace posenc::conformance {

using json_io::Json;
using json_io::Location;

ResultsImplementation::ResultsImplementation(const std::filesystem::path& results)
    : ResultsImplementation(read_bytes(results), results.string()) {}

ResultsImplementation::ResultsImplementation(const std::string& document, const std::string& name) {
  const Location at{&name, std::nullopt, ""};
  Json j;
  try {
    j = Json::parse(document);
  } catch (const Json::exception& e) {
    throw VectorFileError(name + ": not valid JSON: " + e.what());
  }
  json_io::require_only(j, {"implementation", "format", "results"}, at);
  name_ = json_io::read_string(json_io::member(j, "implementation", at), at.field("implementation")) + " (results " +
          name + ")";
  const std::string format = json_io::read_string(json_io::member(j, "format", at), at.field("format"));
  try {
    format_ = parse_format(format);
  } catch (const InvalidParameter& e) {
    at.field("format").fail(e.what());
  }
  const Json& list = json_io::member(j, "results", at);
  if (!list.is_array()) at.field("results").fail("expected an array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Location entry = at.field("results").index(i);
    json_io::require_only(list[i], {"file", "tcId", "status", "values"}, entry);
    const std::string file = json_io::read_string(json_io::member(list[i], "file", entry), entry.field("file"));
    const std::int64_t tc_id = json_io::read_small_int(json_io::member(list[i], "tcId", entry), entry.field("tcId"));
    Outcome o;
    const Json* status = json_io::optional_member(list[i], "status");
    const std::string s = status ? json_io::read_string(*status, entry.field("status")) : "ok";
    if (s == "ok") {
      o.status = Status::ok;
      const Json& values = json_io::member(list[i], "values", entry);
      if (!values.is_array()) entry.field("values").fail("expected an array");
      for (std::size_t k = 0; k < values.size(); ++k) {
        // Outputs are values of the declared format (hex floats; inf, -inf or nan allowed).
        const Location at_value = entry.field("values").index(k);
        const std::string text = json_io::read_string(values[k], at_value);
        if (text == "nan") {
          o.values.push_back(NAN);
          continue;
        }
        o.values.push_back(to_double(format_, json_io::read_format_bits(values[k], format_, at_value)));
      }
    } else if (s == "invalid") {
      o.status = Status::invalid;
    } else if (s == "unsupported") {
      o.status = Status::unsupported;
    } else {
      entry.field("status").fail("expected ok, invalid or unsupported, got '" + s + "'");
    }
    if (!results_.emplace(std::make_pair(file, tc_id), std::move(o)).second) {
      entry.fail("a second result for " + file + " tcId " + std::to_string(tc_id));
    }
  }
}

std::vector<Outcome> ResultsImplementation::run(const VectorGroup&, const VectorCase& c, std::span<const Format> formats) {
  std::vector<Outcome> out;
  const auto it = results_.find({file_, c.tc_id});
  for (Format f : formats) {
    if (f != format_) {
      out.push_back({Status::unsupported, {}, "results are in " + std::string(to_string(format_)), false});
    } else if (it == results_.end()) {
      out.push_back({Status::unsupported, {}, "no result for this case", false});
    } else {
      out.push_back(it->second);
    }
  }
  return out;
}

}  // namespace posenc::conformance
