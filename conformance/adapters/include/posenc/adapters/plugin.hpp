#pragma once
// An implementation loaded from a shared library through the C ABI (posenc/plugin.h). The library
// is loaded in a child process, kept across calls and replaced after any failure: every buffer it
// is handed sits between guard pages, inputs are checked unchanged and outputs pre-filled with
// NaN, and a crash, a hang past the timeout, a write outside its buffers or an unknown status
// fails that call (naming the tcId) while the rest of the suite goes on. A plugin must not print
// (anything on its stdout or stderr fails the call; past 1 MiB it is stopped) and may map at most
// memory_limit_mib more memory during a call (its address space is capped there).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "posenc/judge/implementation.hpp"

namespace posenc::conformance {

class ChildProcess;

class PluginImplementation final : public Implementation {
 public:
  // Starts the child, which loads the library and reads its posenc_plugin_query; a library that
  // cannot be loaded, lacks the query, or was built for another ABI version is refused (Error).
  explicit PluginImplementation(std::string path, double timeout_seconds = 10.0, std::size_t memory_limit_mib = 4096);
  ~PluginImplementation() override;
  std::string name() const override { return name_; }
  std::vector<Outcome> run(const VectorGroup& group, const VectorCase& c, std::span<const Format> formats) override;
  // posenc_plugin_info.working_format (ABI version 2); nothing where it is 0 or absent.
  std::optional<Format> working_format(Format storage) const override;
  // posenc_plugin_info.score_format and probability_format (ABI version 3); nothing where 0 or absent.
  std::optional<Format> score_format(Format storage) const override;
  std::optional<Format> probability_format(Format storage) const override;

 private:
  std::string path_;
  std::string name_;
  std::uint32_t exports_ = 0;  // the entry points the library exports (entry_points.hpp)
  std::map<Format, Format> working_, score_, probability_;  // the declared formats
  std::unique_ptr<ChildProcess> child_;
};

}  // namespace posenc::conformance
