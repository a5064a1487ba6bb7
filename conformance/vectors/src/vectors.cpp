#include "posenc/vectors/vectors.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace posenc::conformance {

Expected Expected::from(const std::vector<Rounded>& values) {
  Expected e;
  for (const auto& v : values) {
    e.exact.push_back(v.exact);
    for (Format f : kAllFormats) e.bits[static_cast<std::size_t>(f)].push_back(v.bits_of(f));
  }
  return e;
}

double residual_of(const std::string& exact, double f64) {
  if (!std::isfinite(f64)) return 0;
  return static_cast<double>(std::strtold(exact.c_str(), nullptr) - static_cast<long double>(f64));
}

std::string exact_of(double f64, double residual) {
  if (std::isnan(f64)) return "nan";
  char text[64];
  std::snprintf(text, sizeof text, "%.20Le", static_cast<long double>(f64) + residual);
  return text;
}

std::int64_t VectorFile::number_of_tests() const {
  std::int64_t n = 0;
  for (const auto& g : groups) n += static_cast<std::int64_t>(g.tests.size());
  return n;
}

bool inputs_exact_in(const VectorGroup& g, const VectorCase& c, Format f) {
  auto exact = [f](const std::vector<double>& values) {
    for (double v : values) {
      if (!exact_bits(f, v)) return false;
    }
    return true;
  };
  const AttentionData& a = c.attention;
  return exact(c.x) && exact(c.y) && exact(g.table) && exact(a.q) && exact(a.k) && exact(a.v) && exact(a.table);
}

std::vector<Format> judged_formats(const VectorGroup& g, const VectorCase& c) {
  std::vector<Format> out;
  for (Format f : kAllFormats) {
    if (inputs_exact_in(g, c, f)) out.push_back(f);
  }
  return out;
}

}  // namespace posenc::conformance
