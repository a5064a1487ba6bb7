#include <charconv>
#include <cmath>

#include "check.hpp"
#include "posenc/params/inputs.hpp"

namespace posenc::check {

std::string format_value(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string format_value(std::int64_t v) { return std::to_string(v); }

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

void fail(std::string_view name, std::string value, std::string_view allowed) {
  throw InvalidParameter(std::string(name), std::move(value), std::string(allowed));
}

void even_at_least(std::string_view name, std::int64_t v, std::int64_t min) {
  if (v < min || v % 2 != 0) {
    fail(name, format_value(v), "an even integer >= " + format_value(min));
  }
}

void in_range(std::string_view name, std::int64_t v, std::int64_t lo, std::int64_t hi) {
  if (v < lo || v > hi) {
    fail(name, format_value(v), "an integer in [" + format_value(lo) + ", " + format_value(hi) + "]");
  }
}

void finite_above(std::string_view name, double v, double bound) {
  if (!std::isfinite(v) || !(v > bound)) {
    fail(name, format_value(v), "finite and > " + format_value(bound));
  }
}

}  // namespace posenc::check

namespace posenc {

void validate_input_vector(std::string_view name, std::span<const double> x, std::int64_t expected, bool nan_allowed) {
  if (static_cast<std::int64_t>(x.size()) != expected) {
    check::fail(name, "(" + std::to_string(x.size()) + " values)",
                "exactly " + std::to_string(expected) + " values");
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) && !(nan_allowed && std::isnan(x[i]))) {
      check::fail(std::string(name) + "[" + std::to_string(i) + "]", check::format_value(x[i]),
                  nan_allowed ? "finite or NaN" : "finite");
    }
  }
}

}  // namespace posenc
