#include "posenc/adapters/results_file.hpp"

#include "posenc/adapters/result_entry.hpp"
#include "posenc/judge/case_judgement.hpp"

#include <algorithm>

#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/manifest.hpp"

namespace posenc::conformance {

using json_io::JsonValue;
using json_io::Location;

ResultsImplementation::ResultsImplementation(const std::filesystem::path& results)
    : ResultsImplementation(read_bytes(results), results.string()) {}

ResultsImplementation::ResultsImplementation(const std::string& document, const std::string& name) : source_(name) {
  const Location at{&source_, std::nullopt, ""};
  const json_io::JsonDocument parsed(document, name);
  const JsonValue j = parsed.root();
  json_io::require_only(j, {"implementation", "format", "workingFormat", "scoreFormat", "probabilityFormat", "results"},
                        at);
  name_ = json_io::read_string(json_io::member(j, "implementation", at), at.field("implementation")) + " (results " +
          name + ")";
  const std::string format = json_io::read_string(json_io::member(j, "format", at), at.field("format"));
  try {
    format_ = parse_format(format);
  } catch (const InvalidParameter& e) {
    at.field("format").fail(e.what());
  }
  // The format the code formed its angles in (SPEC.md section 7); absent: the default.
  if (const auto working = json_io::optional_member(j, "workingFormat")) {
    const std::string w = json_io::read_string(*working, at.field("workingFormat"));
    if (w != "f32" && w != "f64") at.field("workingFormat").fail("'" + w + "': expected f32 or f64");
    working_ = parse_format(w);
  }
  // Attention's roundings (SPEC.md sections 5 and 7); absent: not rounded.
  for (const auto& [key, field] : {std::pair{"scoreFormat", &score_}, {"probabilityFormat", &probability_}}) {
    if (const auto value = json_io::optional_member(j, key)) {
      const std::string r = json_io::read_string(*value, at.field(key));
      try {
        *field = parse_format(r);
      } catch (const InvalidParameter&) {
        at.field(key).fail("'" + r + "': expected f64, f32, bf16 or f16");
      }
    }
  }
  const auto list = json_io::array_elements(json_io::member(j, "results", at), at.field("results"));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Location entry = at.field("results").index(i);
    json_io::require_only(list[i], {"file", "tcId", "status", "values"}, entry);
    const std::string file = json_io::read_string(json_io::member(list[i], "file", entry), entry.field("file"));
    const std::int64_t tc_id = json_io::read_small_int(json_io::member(list[i], "tcId", entry), entry.field("tcId"));
    Outcome o = read_result_outcome(list[i], format_, entry);
    if (!results_.emplace(std::make_pair(file, tc_id), Entry{std::move(o), i}).second) {
      entry.fail("a second result for " + file + " tcId " + std::to_string(tc_id));
    }
  }
}

void ResultsImplementation::check_cases(const std::vector<std::string>& paths,
                                        const std::function<VectorFile(const std::string&)>& load) {
  const Location results{&source_, std::nullopt, "results"};
  std::map<std::string, std::vector<std::pair<std::int64_t, const Entry*>>> by_file;
  for (const auto& [key, entry] : results_) by_file[key.first].emplace_back(key.second, &entry);
  for (const auto& [file, entries] : by_file) {
    const Location first = results.index(entries.front().second->index);
    if (std::find(paths.begin(), paths.end(), file) == paths.end()) {
      first.field("file").fail("'" + file + "' is not a vector file of the MANIFEST (paths below vectors/, e.g. rope/none.json)");
    }
    const VectorFile vectors = load(file);
    std::map<std::int64_t, std::pair<const VectorGroup*, const VectorCase*>> cases;
    for (const auto& g : vectors.groups) {
      for (const auto& c : g.tests) cases[c.tc_id] = {&g, &c};
    }
    for (const auto& [tc_id, entry] : entries) {
      const Location at = results.index(entry->index);
      const auto it = cases.find(tc_id);
      if (it == cases.end()) at.field("tcId").fail(file + " has no case with tcId " + std::to_string(tc_id));
      const auto& [g, c] = it->second;
      const Outcome& o = entry->outcome;
      if (o.status == Status::unsupported) continue;
      if (!inputs_exact_in(*g, *c, format_)) {
        at.fail(file + " tcId " + std::to_string(tc_id) + " has inputs that are not " + std::string(to_string(format_)) +
                " values, so it cannot be answered in the file's format " + std::string(to_string(format_)) +
                " (give it status unsupported or leave it out)");
      }
      const auto counts = accepted_value_counts(*g, *c);
      if (o.status == Status::ok && c->valid && std::find(counts.begin(), counts.end(), o.values.size()) == counts.end()) {
        at.field("values").fail(std::to_string(o.values.size()) + " values; " + file + " tcId " + std::to_string(tc_id) +
                                " has " + value_counts_text(counts));
      }
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
      out.push_back(it->second.outcome);
    }
  }
  return out;
}

}  // namespace posenc::conformance
