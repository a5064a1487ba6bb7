#pragma once
// Learned absolute positions (SPEC.md section 2.2): the lookup of position p is row p of the
// [max_positions][dim] table, copied. The position is validated first
// (validate_learned_position): a row outside the table is an error, never clamped.
#include <cstddef>
#include <cstdint>
#include <span>

#include "posenc/params/learned.hpp"

namespace posenc::ref {

inline std::span<const double> learned_row(const LearnedParams& p, std::span<const double> table, std::int64_t position) {
  return table.subspan(static_cast<std::size_t>(position * p.dim), static_cast<std::size_t>(p.dim));
}

}  // namespace posenc::ref
