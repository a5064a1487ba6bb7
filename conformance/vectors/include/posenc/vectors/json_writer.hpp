#pragma once
// Building JSON documents (vector files, parameters, reports) with nlohmann/json, whose ordered
// objects keep the key order the SPEC shows; json_reader.hpp reads them back.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace posenc::conformance::json_io {

using Json = nlohmann::ordered_json;

std::string decimal_int(std::int64_t v);
std::string hex_double(double v);
Json hex_double_array(const std::vector<double>& v);
Json decimal_int_array(const std::vector<std::int64_t>& v);

}  // namespace posenc::conformance::json_io
