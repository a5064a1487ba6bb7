#pragma once
// One `posenc serve` session (SPEC.md section 10): the requests "session", "cases", "judge" and
// "finish" over one set of vectors and one tolerance, the judging options of the command line.
// Every submission is judged at once (serve_verdict.hpp) and kept; "finish" judges the kept ones
// with the runner, as `posenc verify` judges a results file, and prints its summary.
#include <map>
#include <memory>
#include <ostream>
#include <string>

#include "hf_vectors.hpp"
#include "judging_options.hpp"
#include "posenc/adapters/submitted.hpp"
#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/json_writer.hpp"
#include "posenc/vectors/manifest.hpp"

namespace posenc::cli {

class ServeSession {
 public:
  // Checks the options and the vectors' MANIFEST (as verify does) before any request.
  ServeSession(const ConformOptions& o, const std::string& implementation);
  // Answers one request line: one JSON line, or for "cases" one per vector file and a last one.
  // A request that cannot be answered gets {"error": ...} and the session goes on.
  void handle(const std::string& line, std::ostream& out);
  bool finished() const { return finished_; }
  int status() const { return status_; }  // after finish: 0 conformant, 1 not (as verify)

 private:
  using Json = conformance::json_io::Json;  // answers
  using JsonValue = conformance::json_io::JsonValue;  // requests
  struct Loaded {
    conformance::VectorFile file;
    std::map<std::int64_t, std::pair<std::size_t, std::size_t>> by_tc_id;  // group, case index
  };
  Json describe() const;
  void cases(const JsonValue& request, std::ostream& out);
  Json judge(const JsonValue& request);
  Json finish(const JsonValue& request);
  // The runner's options with the request's "filter", "exclude" and "formats" in place of the
  // command line's, when it names them.
  conformance::RunOptions options_for(const JsonValue& request) const;
  // The formats this case is judged in under options (the runner's rule, runner.cpp).
  std::vector<Format> judged_in(const conformance::VectorGroup& g, const conformance::VectorCase& c,
                                const conformance::RunOptions& options) const;
  const Loaded& load(const std::string& path);

  std::unique_ptr<TemporaryFolder> hf_folder_;  // with --hf-config: the model's vectors, for the session
  ConformOptions o_;
  conformance::RunOptions options_;
  std::vector<conformance::ManifestEntry> manifest_;
  std::map<std::string, Loaded> files_;
  conformance::SubmittedImplementation submitted_;
  std::string request_name_ = "request";
  bool finished_ = false;
  int status_ = 0;
};

}  // namespace posenc::cli
