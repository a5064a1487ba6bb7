#pragma once
// Typed access to a parsed JSON document that reports every problem as a VectorFileError naming
// the file, the test case (tcId) when inside one, and the field's path.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "posenc/vectors/vector_json.hpp"
#include "posenc/formats.hpp"

namespace posenc::conformance::json_io {

using Json = nlohmann::ordered_json;

// Where a value sits: file, optional tcId, dotted field path.
struct Location {
  const std::string* file;
  std::optional<std::int64_t> tc_id;
  std::string path;

  Location field(const std::string& key) const;
  Location index(std::size_t i) const;
  [[noreturn]] void fail(const std::string& what) const;
};

// What a scalar reader is told about where its value sits: a Location, or element i of the
// array at one, whose path is built only when an error is reported. (Building the path of every
// element read took more allocations than the values themselves.) Only ever a parameter: it
// points at the Location it was made from.
class Where {
 public:
  Where(const Location& at) : at_(&at) {}  // implicit: any Location is a Where
  Where(const Location& array, std::size_t i) : at_(&array), index_(i), is_element_(true) {}
  [[noreturn]] void fail(const std::string& what) const;

 private:
  const Location* at_;
  std::size_t index_ = 0;
  bool is_element_ = false;
};

const Json& member(const Json& object, const std::string& key, const Location& at);
const Json* optional_member(const Json& object, const std::string& key);
void require_object(const Json& j, const Location& at);
void require_only(const Json& object, std::initializer_list<const char*> allowed, const Location& at);

std::string read_string(const Json& j, const Where& at);
bool read_bool(const Json& j, const Where& at);
std::int64_t read_small_int(const Json& j, const Where& at);  // a JSON integer (dims, counts)
std::int64_t read_decimal_int(const Json& j, const Where& at);  // a decimal string (positions)
double read_hex_double(const Json& j, const Where& at, bool allow_nan = false);  // a finite C99 hex-float string (or nan)
std::uint64_t read_format_bits(const Json& j, Format f, const Where& at);  // hex float (or inf, nan) exact in f
std::vector<std::int64_t> read_decimal_int_array(const Json& j, const Location& at);
std::vector<double> read_hex_double_array(const Json& j, const Location& at, bool allow_nan = false);
std::vector<std::string> read_string_array(const Json& j, const Location& at);

std::string decimal_int(std::int64_t v);
std::string hex_double(double v);
Json hex_double_array(const std::vector<double>& v);
Json decimal_int_array(const std::vector<std::int64_t>& v);

}  // namespace posenc::conformance::json_io
