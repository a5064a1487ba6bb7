#include "posenc/adapters/reference.hpp"

#include "posenc/vectors/expected.hpp"

namespace posenc::conformance {

std::vector<Outcome> ReferenceImplementation::run(const VectorGroup& group, const VectorCase& c,
                                                  std::span<const Format> formats) {
  Outcome base;
  std::vector<Rounded> values;
  try {
    values = evaluate_reference(group, c);
    base.status = Status::ok;
  } catch (const InvalidParameter& e) {
    base.status = Status::invalid;
    base.message = e.what();
  }
  std::vector<Outcome> out(formats.size(), base);
  for (std::size_t i = 0; i < formats.size(); ++i) {
    for (const auto& r : values) out[i].values.push_back(r.as_double(formats[i]));
  }
  return out;
}

}  // namespace posenc::conformance
