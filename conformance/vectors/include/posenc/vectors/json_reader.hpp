#pragma once
// Typed access to a parsed JSON document that reports every problem as a VectorFileError naming
// the file, the test case (tcId) when inside one, and the field's path.
//
// Documents are parsed with simdjson's DOM: a vector file is tens of megabytes of short strings,
// and nlohmann/json's parser spent ~70% of `posenc list` building its tree (one allocation per
// value), several times more under the sanitizers. Writing stays with nlohmann (json_writer.hpp).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "posenc/formats.hpp"
#include "posenc/vectors/vector_json.hpp"

namespace posenc::conformance::json_io {

// A value of a parsed document: a view, valid while its JsonDocument lives.
class JsonValue {
 public:
  JsonValue() = default;

  bool is_object() const;
  bool is_array() const;
  bool is_string() const;
  bool is_boolean() const;
  bool is_null() const;
  bool is_number() const;
  bool is_number_integer() const;

  // Each requires its type (checked by the caller with is_*).
  std::string_view string() const;
  bool boolean() const;
  double number() const;
  // An integer in [-2^63, 2^63-1], or nullopt for one beyond it.
  std::optional<std::int64_t> integer() const;

  // An array's elements or an object's members, in document order (simdjson walks them; it
  // does not index them).
  std::vector<JsonValue> elements() const;
  std::vector<std::pair<std::string_view, JsonValue>> members() const;
  std::size_t size() const;  // of an array or object (0 for any other value)
  std::optional<JsonValue> find(std::string_view key) const;  // an object's member
  std::string text() const;  // the value as minified JSON

 private:
  friend struct SimdjsonBridge;  // json_reader.cpp: to and from simdjson::dom::element
  // The bytes of a simdjson::dom::element (a document pointer and a tape index), so that only
  // json_reader.cpp includes simdjson.h: the header alone takes ~4 CPU s to compile in each of
  // the nine units that read JSON (checked there: size, alignment, trivially copyable).
  alignas(void*) unsigned char element_[2 * sizeof(void*)]{};
};

// A parsed document; its values point into it.
class JsonDocument {
 public:
  // A VectorFileError "NAME: not valid JSON: ..." unless `text` is one JSON value.
  JsonDocument(const std::string& text, const std::string& name);
  ~JsonDocument();
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;
  JsonValue root() const { return root_; }

 private:
  struct Parser;  // simdjson's DOM parser, which owns the document
  std::unique_ptr<Parser> parser_;
  JsonValue root_;
};

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
// element read would take more allocations than the values themselves.) Only ever a parameter: it
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

JsonValue member(const JsonValue& object, const std::string& key, const Location& at);
std::optional<JsonValue> optional_member(const JsonValue& object, const std::string& key);
void require_object(const JsonValue& j, const Location& at);
// Every key of `object` is one of `allowed`, and none appears twice; a key not allowed is an
// error saying `unknown`.
void require_only(const JsonValue& object, std::span<const std::string_view> allowed, const Location& at,
                  const std::string& unknown);
void require_only(const JsonValue& object, std::initializer_list<std::string_view> allowed, const Location& at);
// The elements of an array (an error unless `j` is one).
std::vector<JsonValue> array_elements(const JsonValue& j, const Location& at);

std::string read_string(const JsonValue& j, const Where& at);
bool read_bool(const JsonValue& j, const Where& at);
std::int64_t read_small_int(const JsonValue& j, const Where& at);  // a JSON integer (dims, counts)
std::int64_t read_decimal_int(const JsonValue& j, const Where& at);  // a decimal string (positions)
double read_hex_double(const JsonValue& j, const Where& at, bool allow_nan = false);  // a finite C99 hex-float string (or nan)
std::uint64_t read_format_bits(const JsonValue& j, Format f, const Where& at);  // hex float (or inf, nan) exact in f
std::vector<std::int64_t> read_decimal_int_array(const JsonValue& j, const Location& at);
std::vector<double> read_hex_double_array(const JsonValue& j, const Location& at, bool allow_nan = false);
std::vector<std::string> read_string_array(const JsonValue& j, const Location& at);

}  // namespace posenc::conformance::json_io
