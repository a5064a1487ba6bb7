#include "posenc/adapters/submitted.hpp"

namespace posenc::conformance {

void SubmittedImplementation::submit(const std::string& file, std::int64_t tc_id, Format f, Outcome o) {
  outcomes_[{file, tc_id, f}] = std::move(o);
}

std::vector<Outcome> SubmittedImplementation::run(const VectorGroup&, const VectorCase& c, std::span<const Format> formats) {
  std::vector<Outcome> out;
  for (Format f : formats) {
    const auto it = outcomes_.find({file_, c.tc_id, f});
    if (it == outcomes_.end()) {
      out.push_back({Status::unsupported, {}, "nothing submitted for this case", false});
    } else {
      out.push_back(it->second);
    }
  }
  return out;
}

}  // namespace posenc::conformance
