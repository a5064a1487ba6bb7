#pragma once
// The standard and Boost headers of the implementation's units, precompiled once for every unit
// and mutant (tests/mutation/CMakeLists.txt): parsing them is most of a unit's compile time, and
// no mutant changes them. posenc's own headers stay out: a mutant changes one of them.
#include <algorithm>
#include <array>
#include <bit>
#include <boost/math/constants/constants.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <limits>
#include <numbers>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
