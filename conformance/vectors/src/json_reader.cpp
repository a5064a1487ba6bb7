#include "posenc/vectors/json_reader.hpp"

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <optional>

namespace posenc::conformance::json_io {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_decimal_digit(char c) { return c >= '0' && c <= '9'; }

// C99 hex float as posenc writes it: -?0x[01](.hex+)?p[+-]digits, or inf/-inf, or nan.
bool is_hex_float(std::string_view s, bool allow_inf, bool allow_nan = false) {
  if (allow_inf && (s == "inf" || s == "-inf")) return true;
  if (allow_nan && s == "nan") return true;
  std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (s.compare(i, 2, "0x") != 0) return false;
  i += 2;
  auto hex = [&](std::size_t k) { return k < s.size() && hex_digit(s[k]) >= 0; };
  if (!hex(i)) return false;
  ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!hex(i)) return false;
    while (hex(i)) ++i;
  }
  if (i >= s.size() || s[i] != 'p') return false;
  ++i;
  if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
  ++i;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!is_decimal_digit(s[i])) return false;
  }
  return true;
}

// A valid hex float (is_hex_float) whose digits form an integer M below 2^53 and whose value
// M 2^k is a normal binary64 is that double exactly: no rounding happens, so this equals
// strtod's answer without strtod's general algorithm (a tenth of the time of reading a vector file).
// Otherwise nullopt, and strtod rounds.
std::optional<double> exact_hex_to_double(std::string_view s) {
  const bool negative = s[0] == '-';
  std::size_t i = negative ? 3 : 2;
  std::uint64_t m = 0;
  std::int64_t k = 0;  // the binary exponent of M's last digit
  bool fraction = false;
  for (; s[i] != 'p'; ++i) {
    if (s[i] == '.') {
      fraction = true;
      continue;
    }
    if (m >> 49) return std::nullopt;  // M would reach 2^53
    m = m * 16 + static_cast<std::uint64_t>(hex_digit(s[i]));
    if (fraction) k -= 4;
  }
  std::int64_t e = 0;
  for (std::size_t j = i + 2; j < s.size() && e < 100000; ++j) e = e * 10 + (s[j] - '0');
  k += s[i + 1] == '-' ? -e : e;
  if (m == 0) return negative ? -0.0 : 0.0;
  if (k < -1100 || k > 1100) return std::nullopt;
  const double v = std::ldexp(static_cast<double>(m), static_cast<int>(k));
  if (!std::isnormal(v)) return std::nullopt;
  return negative ? -v : v;
}

// The double a hex-float text denotes. A nonzero mantissa that underflows binary64 to zero is an
// error, not the zero it would silently become.
double hex_to_double(std::string_view text, const Where& at) {
  if (const auto exact = exact_hex_to_double(text)) return *exact;
  const std::string s(text);
  double v = std::strtod(s.c_str(), nullptr);
  const bool nonzero_digits = s.find_first_of("123456789abcdefABCDEF", s.find('x') + 1) < s.find('p');
  if (v == 0 && nonzero_digits) at.fail("hex float '" + s + "' underflows binary64");
  return v;
}

}  // namespace

struct SimdjsonBridge {
  static_assert(sizeof(simdjson::dom::element) == sizeof(JsonValue::element_) &&
                alignof(simdjson::dom::element) <= alignof(JsonValue) &&
                std::is_trivially_copyable_v<simdjson::dom::element>);
  static simdjson::dom::element element(const JsonValue& v) {
    simdjson::dom::element e;
    std::memcpy(static_cast<void*>(&e), v.element_, sizeof e);
    return e;
  }
  static JsonValue value(simdjson::dom::element e) {
    JsonValue v;
    std::memcpy(v.element_, static_cast<const void*>(&e), sizeof e);
    return v;
  }
};

namespace {
simdjson::dom::element element(const JsonValue& v) { return SimdjsonBridge::element(v); }
JsonValue value(simdjson::dom::element e) { return SimdjsonBridge::value(e); }
}  // namespace

struct JsonDocument::Parser {
  simdjson::dom::parser parser;
};

JsonDocument::JsonDocument(const std::string& text, const std::string& name) : parser_(std::make_unique<Parser>()) {
  simdjson::dom::element root;
  if (const auto error = parser_->parser.parse(text).get(root)) {
    // nlohmann/json says where the text stops being JSON; simdjson names only the kind of error.
    std::string why = simdjson::error_message(error);
    try {
      [[maybe_unused]] const auto parsed = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      why = e.what();
    }
    throw VectorFileError(name + ": not valid JSON: " + why);
  }
  root_ = value(root);
}

JsonDocument::~JsonDocument() = default;

bool JsonValue::is_object() const { return element(*this).is_object(); }
bool JsonValue::is_array() const { return element(*this).is_array(); }
bool JsonValue::is_string() const { return element(*this).is_string(); }
bool JsonValue::is_boolean() const { return element(*this).is_bool(); }
bool JsonValue::is_null() const { return element(*this).is_null(); }
bool JsonValue::is_number() const { return element(*this).is_number(); }
bool JsonValue::is_number_integer() const { return element(*this).is_int64() || element(*this).is_uint64(); }
std::string_view JsonValue::string() const { return element(*this).get_string().value_unsafe(); }
bool JsonValue::boolean() const { return element(*this).get_bool().value_unsafe(); }
double JsonValue::number() const { return element(*this).get_double().value_unsafe(); }
std::string JsonValue::text() const { return simdjson::to_string(element(*this)); }

std::optional<std::int64_t> JsonValue::integer() const {
  std::int64_t v = 0;
  if (element(*this).get_int64().get(v)) return std::nullopt;
  return v;
}

// (simdjson's get_array() and get_object() return results by value: the array or object is
// copied out before it is walked.)
std::vector<JsonValue> JsonValue::elements() const {
  const simdjson::dom::array array = element(*this).get_array().value_unsafe();
  std::vector<JsonValue> out;
  out.reserve(array.size());
  for (simdjson::dom::element e : array) out.push_back(value(e));
  return out;
}

std::vector<std::pair<std::string_view, JsonValue>> JsonValue::members() const {
  const simdjson::dom::object object = element(*this).get_object().value_unsafe();
  std::vector<std::pair<std::string_view, JsonValue>> out;
  for (simdjson::dom::key_value_pair kv : object) out.emplace_back(kv.key, value(kv.value));
  return out;
}

std::size_t JsonValue::size() const {
  if (is_array()) return elements().size();
  return is_object() ? members().size() : 0;
}

std::optional<JsonValue> JsonValue::find(std::string_view key) const {
  if (!is_object()) return std::nullopt;
  const simdjson::dom::object object = element(*this).get_object().value_unsafe();
  simdjson::dom::element v;
  if (object.at_key(key).get(v)) return std::nullopt;
  return value(v);
}

Location Location::field(const std::string& key) const {
  return {file, tc_id, path.empty() ? key : path + "." + key};
}

Location Location::index(std::size_t i) const { return {file, tc_id, path + "[" + std::to_string(i) + "]"}; }

void Location::fail(const std::string& what) const {
  std::string where = *file;
  if (tc_id) where += ": tcId " + std::to_string(*tc_id);
  throw VectorFileError(where + ": field '" + path + "': " + what);
}

void Where::fail(const std::string& what) const {
  if (is_element_) at_->index(index_).fail(what);
  at_->fail(what);
}

JsonValue member(const JsonValue& object, const std::string& key, const Location& at) {
  require_object(object, at);
  const auto v = object.find(key);
  if (!v) at.field(key).fail("missing");
  return *v;
}

std::optional<JsonValue> optional_member(const JsonValue& object, const std::string& key) { return object.find(key); }

void require_object(const JsonValue& j, const Location& at) {
  if (!j.is_object()) at.fail("expected an object");
}

void require_only(const JsonValue& object, std::span<const std::string_view> allowed, const Location& at,
                  const std::string& unknown) {
  require_object(object, at);
  const auto members = object.members();
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string_view key = members[i].first;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) at.field(std::string(key)).fail(unknown);
    for (std::size_t k = 0; k < i; ++k) {
      if (members[k].first == key) at.field(std::string(key)).fail("appears twice");
    }
  }
}

void require_only(const JsonValue& object, std::initializer_list<std::string_view> allowed, const Location& at) {
  require_only(object, std::span<const std::string_view>(allowed.begin(), allowed.size()), at, "unknown field");
}

std::vector<JsonValue> array_elements(const JsonValue& j, const Location& at) {
  if (!j.is_array()) at.fail("expected an array");
  return j.elements();
}

std::string read_string(const JsonValue& j, const Where& at) {
  if (!j.is_string()) at.fail("expected a string");
  return std::string(j.string());
}

bool read_bool(const JsonValue& j, const Where& at) {
  if (!j.is_boolean()) at.fail("expected true or false");
  return j.boolean();
}

std::int64_t read_small_int(const JsonValue& j, const Where& at) {
  if (!j.is_number_integer()) at.fail("expected an integer");
  const auto v = j.integer();
  if (!v) at.fail("expected an integer in [-2^63, 2^63-1]");
  return *v;
}

std::int64_t read_decimal_int(const JsonValue& j, const Where& at) {
  const std::string s = read_string(j, at);
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  bool digits = !s.empty() && s.find_first_not_of("-0123456789") == std::string::npos;
  if (!digits || end != s.c_str() + s.size() || errno == ERANGE) {
    at.fail("expected a decimal integer string in [-2^63, 2^63-1], got '" + s + "'");
  }
  return v;
}

double read_hex_double(const JsonValue& j, const Where& at, bool allow_nan) {
  if (!j.is_string()) at.fail("expected a string");
  const std::string_view s = j.string();
  if (allow_nan && s == "nan") return NAN;
  if (!is_hex_float(s, false)) {
    at.fail("expected a finite C99 hex float string" + std::string(allow_nan ? " or nan" : "") + ", got '" +
            std::string(s) + "'");
  }
  double v = hex_to_double(s, at);
  if (std::isinf(v)) at.fail("hex float '" + std::string(s) + "' overflows binary64");
  return v;
}

std::uint64_t read_format_bits(const JsonValue& j, Format f, const Where& at) {
  if (!j.is_string()) at.fail("expected a string");
  const std::string_view s = j.string();
  if (!is_hex_float(s, true, true)) at.fail("expected a C99 hex float string, inf or nan, got '" + std::string(s) + "'");
  const double v = s == "inf" ? INFINITY : s == "-inf" ? -INFINITY : s == "nan" ? NAN : hex_to_double(s, at);
  auto bits = exact_bits(f, v);
  if (!bits) {
    at.fail("'" + std::string(s) + "' is not exactly representable in " + std::string(to_string(f)));
  }
  return *bits;
}

template <class T, class Read>
std::vector<T> read_array(const JsonValue& j, const Location& at, Read read) {
  std::vector<T> out;
  std::size_t i = 0;
  for (const JsonValue& v : array_elements(j, at)) out.push_back(read(v, Where(at, i++)));
  return out;
}

std::vector<std::int64_t> read_decimal_int_array(const JsonValue& j, const Location& at) {
  return read_array<std::int64_t>(j, at, read_decimal_int);
}

std::vector<double> read_hex_double_array(const JsonValue& j, const Location& at, bool allow_nan) {
  return read_array<double>(j, at, [allow_nan](const JsonValue& v, const Where& a) { return read_hex_double(v, a, allow_nan); });
}

std::vector<std::string> read_string_array(const JsonValue& j, const Location& at) {
  return read_array<std::string>(j, at, read_string);
}

}  // namespace posenc::conformance::json_io
