#include "file_builder.hpp"

#include <algorithm>
#include <stdexcept>

#include "posenc/vectors/expected.hpp"
#include "posenc/vectors/vectors.hpp"

namespace posenc::generator {

FileBuilder::FileBuilder(std::string family, std::string variant, std::uint64_t seed) : rng_(seed) {
  file_.family = std::move(family);
  file_.variant = std::move(variant);
  file_.seed = seed;
  file_.generator = "posenc generate (reference: MPFR backend, certified correct rounding)";
}

VectorGroup& FileBuilder::group(CaseType type, Params params, std::string comment, Format input_format) {
  VectorGroup g;
  g.type = type;
  g.params = std::move(params);
  g.comment = std::move(comment);
  g.input_format = input_format;
  file_.groups.push_back(std::move(g));
  return file_.groups.back();
}

VectorCase& FileBuilder::push(VectorCase c) {
  if (file_.groups.empty()) throw std::logic_error("posenc generate: case added before any group");
  c.tc_id = next_id_++;
  file_.groups.back().tests.push_back(std::move(c));
  return file_.groups.back().tests.back();
}

// A valid case is judged in every format unless it says otherwise: F64Only exactly when its
// inputs are exact in f64 alone, FormatSubset exactly when in some but not all formats.
void FileBuilder::check_formats(const VectorGroup& g, const VectorCase& c) const {
  const auto judged = conformance::judged_formats(g, c);
  auto has = [&](std::string_view flag) { return std::find(c.flags.begin(), c.flags.end(), flag) != c.flags.end(); };
  const bool f64_only = judged.size() == 1;
  const bool subset = judged.size() > 1 && judged.size() < std::size(kAllFormats);
  if (f64_only != has(conformance::kF64OnlyFlag) || subset != has("FormatSubset")) {
    throw std::logic_error("posenc generate: " + file_.relative_path() + " tcId " + std::to_string(c.tc_id) +
                           " is judged in " + std::to_string(judged.size()) +
                           " formats, but its F64Only/FormatSubset flags say otherwise");
  }
}

const VectorCase& FileBuilder::add(VectorCase c) {
  VectorCase& stored = push(std::move(c));
  const VectorGroup& g = file_.groups.back();
  check_formats(g, stored);
  try {
    conformance::fill_expected(g, stored);
  } catch (const InvalidParameter& e) {
    throw std::logic_error("posenc generate: " + file_.relative_path() + " tcId " + std::to_string(stored.tc_id) +
                           " meant valid, but: " + e.what());
  } catch (const Uncertifiable& e) {
    throw Uncertifiable(file_.relative_path() + " tcId " + std::to_string(stored.tc_id) + ": " + e.what());
  }
  return stored;
}

void FileBuilder::add_invalid(VectorCase c, const std::string& parameter) {
  VectorCase& stored = push(std::move(c));
  stored.valid = false;
  stored.error = parameter;
  try {
    conformance::evaluate_reference(file_.groups.back(), stored);
  } catch (const InvalidParameter& e) {
    if (e.parameter() == parameter) return;
    throw std::logic_error("posenc generate: " + file_.relative_path() + " tcId " + std::to_string(stored.tc_id) +
                           " expected an error on " + parameter + ", got: " + e.what());
  }
  throw std::logic_error("posenc generate: " + file_.relative_path() + " tcId " + std::to_string(stored.tc_id) +
                         " expected an error on " + parameter + ", got none");
}

VectorFile FileBuilder::finish() && {
  std::map<std::string, std::string> used;
  for (const auto& g : file_.groups) {
    for (const auto& c : g.tests) {
      for (const auto& flag : c.flags) {
        auto it = file_.notes.find(flag);
        if (it == file_.notes.end()) {
          throw std::logic_error("posenc generate: " + file_.relative_path() + " uses flag " + flag + " without a note");
        }
        used.insert(*it);
      }
    }
  }
  file_.notes = std::move(used);
  return std::move(file_);
}

VectorCase at(std::int64_t position, std::string comment, std::vector<std::string> flags) {
  return at_axes({position}, std::move(comment), std::move(flags));
}

VectorCase at_axes(std::vector<std::int64_t> position, std::string comment, std::vector<std::string> flags) {
  VectorCase c;
  c.position = std::move(position);
  c.comment = std::move(comment);
  c.flags = std::move(flags);
  return c;
}

}  // namespace posenc::generator
