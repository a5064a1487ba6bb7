#pragma once
// Range checks shared by every family's validate(). Each throws InvalidParameter naming the
// parameter, the offending value and the allowed range.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "posenc/errors.hpp"

namespace posenc::check {

// Shortest decimal that reads back as the same double ("nan", "inf" spelled out).
std::string format_value(double v);
std::string format_value(std::int64_t v);
std::string quoted(std::string_view s);

[[noreturn]] void fail(std::string_view name, std::string value, std::string_view allowed);

void even_at_least(std::string_view name, std::int64_t v, std::int64_t min);
void in_range(std::string_view name, std::int64_t v, std::int64_t lo, std::int64_t hi);
// finite and > bound
void finite_above(std::string_view name, double v, double bound);

// Largest position of absolute encodings: 2^53, exactly representable in every double consumer.
inline constexpr std::int64_t kMaxAbsolutePosition = std::int64_t{1} << 53;

// A scaling field the chosen kind does not read must not be set.
template <class T>
void absent(std::string_view name, const std::optional<T>& field, std::string_view kind) {
  if (field.has_value()) {
    if constexpr (std::is_same_v<T, bool>) {
      fail(name, *field ? "true" : "false", "absent for scaling " + quoted(kind));
    } else {
      fail(name, format_value(*field), "absent for scaling " + quoted(kind));
    }
  }
}

template <class T>
const T& required(std::string_view name, const std::optional<T>& field, std::string_view kind,
                  std::string_view allowed) {
  if (!field.has_value()) {
    fail(name, "(missing)",
         "set for scaling " + quoted(kind) + ": " + std::string(allowed));
  }
  return *field;
}

// Parses one of an enum's names, listed in declaration order.
template <class E, std::size_t N>
E parse_enum(std::string_view name, std::string_view s, const std::array<const char*, N>& names) {
  std::string allowed = "one of";
  for (std::size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<E>(i);
    allowed += (i ? ", " : " ") + std::string(names[i]);
  }
  fail(name, quoted(s), allowed);
}

}  // namespace posenc::check
