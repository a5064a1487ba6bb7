#include "posenc/vectors/vectors.hpp"

namespace posenc::conformance {

Expected Expected::from(const std::vector<Rounded>& values) {
  Expected e;
  for (const auto& v : values) {
    e.exact.push_back(v.exact);
    for (Format f : kAllFormats) e.bits[static_cast<std::size_t>(f)].push_back(v.bits_of(f));
  }
  return e;
}

std::int64_t VectorFile::number_of_tests() const {
  std::int64_t n = 0;
  for (const auto& g : groups) n += static_cast<std::int64_t>(g.tests.size());
  return n;
}

}  // namespace posenc::conformance
