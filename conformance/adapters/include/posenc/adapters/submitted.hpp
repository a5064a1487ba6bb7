#pragma once
// Outputs handed over one case at a time (`posenc serve`, SPEC.md section 10), judged at the end
// as an implementation: like a results file (results_file.hpp), but in any number of formats.
// A case and format without a submission is reported as unsupported (no entry point), as a
// results file's missing entry is. The working formats are the session's --working-format.
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "posenc/judge/implementation.hpp"

namespace posenc::conformance {

class SubmittedImplementation final : public Implementation {
 public:
  explicit SubmittedImplementation(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  // The later submission for a case and format replaces the earlier one (a test run again).
  void submit(const std::string& file, std::int64_t tc_id, Format f, Outcome o);
  void begin_file(const std::string& path) override { file_ = path; }
  std::vector<Outcome> run(const VectorGroup& group, const VectorCase& c, std::span<const Format> formats) override;

 private:
  std::string name_;
  std::string file_;
  std::map<std::tuple<std::string, std::int64_t, Format>, Outcome> outcomes_;
};

}  // namespace posenc::conformance
