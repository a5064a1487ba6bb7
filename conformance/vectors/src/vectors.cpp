#include "posenc/vectors/vectors.hpp"

#include <array>

#include "posenc/errors.hpp"

namespace posenc::conformance {
namespace {

constexpr std::array kCaseTypes{"sinusoidal_row", "sinusoidal_embed", "sinusoidal_dot", "rope_frequencies",
                                "rope_table",     "rope_rotate",      "rope_dot",       "alibi_slopes",
                                "alibi_bias",     "learned_lookup"};

}  // namespace

std::string_view to_string(CaseType t) { return kCaseTypes[static_cast<std::size_t>(t)]; }

CaseType parse_case_type(std::string_view s) {
  for (std::size_t i = 0; i < kCaseTypes.size(); ++i) {
    if (s == kCaseTypes[i]) return static_cast<CaseType>(i);
  }
  throw InvalidParameter("type", "'" + std::string(s) + "'", "a known test group type");
}

std::string_view family_of(CaseType t) {
  std::string_view name = to_string(t);
  return name.substr(0, name.find('_'));
}

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
