#include "posenc/adapters/plugin.hpp"

#include "child_process.hpp"
#include "posenc/abi/convert.hpp"
#include "plugin_cases.hpp"

namespace posenc::conformance {
namespace {

std::optional<Format> declared(const std::map<Format, Format>& m, Format storage) {
  const auto it = m.find(storage);
  return it == m.end() ? std::nullopt : std::optional(it->second);
}

}  // namespace

PluginImplementation::PluginImplementation(std::string path, double timeout_seconds, std::size_t memory_limit_mib)
    : path_(std::move(path)), child_(std::make_unique<ChildProcess>(path_, timeout_seconds, memory_limit_mib << 20)) {
  if (const auto failure = child_->start()) {
    if (failure->refused) throw Error("posenc: plugin " + path_ + ": " + failure->what);
    throw Error("posenc: plugin " + path_ + " " + failure->what + " while being queried");
  }
  name_ = child_->greeting().message + " (" + path_ + ")";
  exports_ = child_->greeting().exports;
  for (const Format f : kAllFormats) {
    const auto d = static_cast<std::size_t>(plugin::to_abi(f));
    // The child checked the codes (plugin_call.cpp): this cannot throw.
    const Greeting& g = child_->greeting();
    if (const auto w = plugin::working_format_from_abi("working_format", g.working_format[d])) working_[f] = *w;
    if (const auto s = plugin::rounding_format_from_abi("score_format", g.score_format[d])) score_[f] = *s;
    if (const auto p = plugin::rounding_format_from_abi("probability_format", g.probability_format[d])) {
      probability_[f] = *p;
    }
  }
}

std::optional<Format> PluginImplementation::working_format(Format storage) const { return declared(working_, storage); }
std::optional<Format> PluginImplementation::score_format(Format storage) const { return declared(score_, storage); }
std::optional<Format> PluginImplementation::probability_format(Format storage) const {
  return declared(probability_, storage);
}

PluginImplementation::~PluginImplementation() = default;

std::vector<Outcome> PluginImplementation::run(const VectorGroup& group, const VectorCase& c,
                                               std::span<const Format> formats) {
  // Every format's call first, so that one round trip to the child carries them all.
  std::vector<std::variant<Outcome, PreparedCall>> prepared;
  prepared.reserve(formats.size());
  std::vector<const Request*> batch;
  for (const Format f : formats) {
    prepared.push_back(prepare(group, c, f, exports_));
    if (const auto* call = std::get_if<PreparedCall>(&prepared.back())) batch.push_back(&call->request);
  }
  std::vector<CallResult> results = child_->call(batch);
  std::vector<Outcome> out;
  std::size_t next = 0;
  for (auto& p : prepared) {
    if (auto* known = std::get_if<Outcome>(&p)) {
      out.push_back(std::move(*known));
    } else {
      out.push_back(outcome(std::get<PreparedCall>(p), std::move(results.at(next++))));
    }
  }
  return out;
}

}  // namespace posenc::conformance
