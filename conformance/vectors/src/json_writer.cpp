#include "posenc/vectors/json_writer.hpp"

#include <bit>

#include "posenc/formats.hpp"

namespace posenc::conformance::json_io {

std::string decimal_int(std::int64_t v) { return std::to_string(v); }

std::string hex_double(double v) { return hex_float(Format::f64, std::bit_cast<std::uint64_t>(v)); }

Json hex_double_array(const std::vector<double>& v) {
  Json a = Json::array();
  for (double x : v) a.push_back(hex_double(x));
  return a;
}

Json decimal_int_array(const std::vector<std::int64_t>& v) {
  Json a = Json::array();
  for (auto x : v) a.push_back(decimal_int(x));
  return a;
}

}  // namespace posenc::conformance::json_io
