#pragma once
// Outputs that code in any language wrote for the golden vectors (SPEC.md §7), judged as an
// implementation: each (file, tcId) answers in the results file's format; a case it does not
// list is reported as unsupported. An entry naming a case that does not exist, with the wrong
// number of values, or in a format the case's inputs are not exact in is refused (check_cases).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "posenc/judge/implementation.hpp"

namespace posenc::conformance {

class ResultsImplementation final : public Implementation {
 public:
  // Reads and checks the whole file first; a malformed one is a VectorFileError naming the entry.
  explicit ResultsImplementation(const std::filesystem::path& results);
  // The same from the text of a results file; `source` names it in errors.
  ResultsImplementation(const std::string& document, const std::string& source);
  std::string name() const override { return name_; }
  void check_cases(const std::vector<std::string>& paths,
                   const std::function<VectorFile(const std::string&)>& load) override;
  void begin_file(const std::string& path) override { file_ = path; }
  std::vector<Outcome> run(const VectorGroup& group, const VectorCase& c, std::span<const Format> formats) override;
  // The file's "workingFormat", when it has one (it holds one storage format).
  std::optional<Format> working_format(Format storage) const override {
    return storage == format_ ? working_ : std::nullopt;
  }
  // The file's "scoreFormat" and "probabilityFormat" (attention's roundings), when it has them.
  std::optional<Format> score_format(Format storage) const override { return storage == format_ ? score_ : std::nullopt; }
  std::optional<Format> probability_format(Format storage) const override {
    return storage == format_ ? probability_ : std::nullopt;
  }

 private:
  struct Entry {
    Outcome outcome;
    std::size_t index = 0;  // in the file's "results" array, for error messages
  };
  std::string source_;
  std::string name_;
  Format format_ = Format::f64;
  std::optional<Format> working_, score_, probability_;
  std::string file_;
  std::map<std::pair<std::string, std::int64_t>, Entry> results_;
};

}  // namespace posenc::conformance
