#pragma once
// The size check of a caller's span (fast.hpp: an output holds exactly what a call writes, and
// a table exactly what it reads), before anything is written.
#include <cstddef>
#include <cstdint>
#include <string>

#include "posenc/errors.hpp"

namespace posenc::fast::detail {

// `got` floats must be `rows` x `width`; refused with the parameter and both sizes named.
inline void check_floats(const char* name, std::size_t got, std::size_t rows, std::int64_t width) {
  std::size_t expected = 0;
  const bool overflow = width < 0 || __builtin_mul_overflow(rows, static_cast<std::size_t>(width), &expected);
  if (overflow || got != expected) {
    const std::string shape = std::to_string(rows) + " x " + std::to_string(width);
    throw InvalidParameter(name, std::to_string(got) + " floats",
                           overflow ? "exactly " + shape + " floats"
                                    : "exactly " + std::to_string(expected) + " floats (" + shape + ")");
  }
}

}  // namespace posenc::fast::detail
