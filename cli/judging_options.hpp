#pragma once
// The options `conform`, `verify` and `serve` share: how a run selects and judges the vectors
// (--profile, --filter, --formats, ...), registered once and read into the runner's RunOptions
// once, so the three commands judge alike.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "text_io.hpp"
#include "posenc/judge/runner.hpp"

namespace posenc::cli {

struct ConformOptions {
  std::string impl = "reference";
  std::string profile = "strict";
  std::optional<std::string> bound;
  std::string vectors = default_vectors_dir();
  bool own_vectors = false;
  std::vector<std::string> filter, exclude;
  std::optional<std::string> formats;
  std::optional<std::string> working_format;
  std::optional<std::string> score_format, probability_format;
  std::optional<std::string> max_position;
  std::optional<std::string> checks;
  std::string max_failures = "5";
  std::optional<std::string> report;
  std::optional<std::string> junit;
  std::optional<std::string> html;
  std::string timeout = "10";
  std::string memory_limit = "4096";
  std::string seed = "1";
  std::string property_cases = "100";
  std::optional<std::string> property_formats;
  std::optional<std::string> hf_config;
  std::optional<std::string> hf_name;  // --name: the model's vectors are rope/NAME.json
};

// Registers the judging options (--profile ... --html) on c, reading into o.
void add_judging_options(Command& c, ConformOptions& o);
// The command line that reruns this check: what the reports print next to a failure.
std::string replay_command(const std::string& head, const ConformOptions& o, bool properties);
// The parts --checks selects (all it can run when not given): a name outside them, or properties
// where there is no code to call (verify, serve), is refused.
std::vector<conformance::Part> selected_parts(const ConformOptions& o, bool properties);
// The runner's options from o: every option checked, an invalid one an InvalidParameter naming it.
conformance::RunOptions run_options(const ConformOptions& o, bool properties);
// --max-failures, checked.
std::int64_t parse_max_failures(const ConformOptions& o);

}  // namespace posenc::cli
