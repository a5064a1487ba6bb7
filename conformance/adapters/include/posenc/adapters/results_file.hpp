#pragma once
// Outputs that code in any language wrote for the golden vectors (SPEC.md §7), judged as an
// implementation: each (file, tcId) answers in the results file's format; a case it does not
// list is reported as unsupported.
#include <filesystem>
#include <map>
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
  void begin_file(const std::string& path) override { file_ = path; }
  std::vector<Outcome> run(const VectorGroup& group, const VectorCase& c, std::span<const Format> formats) override;

 private:
  std::string name_;
  Format format_ = Format::f64;
  std::string file_;
  std::map<std::pair<std::string, std::int64_t>, Outcome> results_;
};

}  // namespace posenc::conformance
