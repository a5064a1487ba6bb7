#include "posenc/strided_view.hpp"

#include <limits>
#include <string>

#include "posenc/errors.hpp"

namespace posenc {
namespace {

constexpr auto kMaxBytes = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());

// The overflow errors, out of line and cold: the checks below inline into every caller, which
// then pays for building an error's strings only when it throws (a one-token decode call checks
// four views: ~770 instructions of set-up per call before, most of them these checks' calls).
[[noreturn, gnu::cold, gnu::noinline]] void overflow(const StridedView& v, const char* suffix, std::int64_t a,
                                                     const char* op, std::int64_t b, const char* allowed) {
  throw InvalidParameter(std::string(v.name) + suffix, std::to_string(a) + " " + op + " " + std::to_string(b), allowed);
}

// `what` is v.name followed by `suffix`: the parameter an overflow is reported against.
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const StridedView& v, const char* suffix) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]] overflow(v, suffix, a, "x", b, "a product that fits in 64 bits");
  return r;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const StridedView& v, const char* suffix) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) [[unlikely]] overflow(v, suffix, a, "+", b, "a sum that fits in 64 bits");
  return r;
}

// Elements one outer index spans: (inner - 1) * inner_stride + row.
std::int64_t block(const StridedView& v) {
  return checked_add(checked_mul(v.inner - 1, v.inner_stride, v, " extent"), v.row, v, " extent");
}

std::uintptr_t address(const StridedView& v) { return reinterpret_cast<std::uintptr_t>(v.base); }

std::size_t extent_bytes(const StridedView& v) {
  if (v.outer == 0 || v.inner == 0 || v.row == 0) return 0;
  const std::int64_t elements = checked_add(checked_mul(v.outer - 1, v.outer > 1 ? v.outer_stride : 0, v, " extent"),
                                            block(v), v, " extent");
  const std::int64_t bytes = checked_mul(elements, static_cast<std::int64_t>(v.element_size), v, " extent in bytes");
  if (static_cast<std::uint64_t>(bytes) > kMaxBytes - address(v)) {
    throw InvalidParameter(v.name, std::to_string(bytes) + " bytes from its base", "an extent inside the address space");
  }
  return static_cast<std::size_t>(bytes);
}

}  // namespace

std::size_t check_view(const StridedView& v, const char* outer_stride_name, const char* inner_stride_name, bool written) {
  if (v.outer == 0 || v.inner == 0 || v.row == 0) return 0;
  if (v.outer > 1 && v.outer_stride < 1) {
    throw InvalidParameter(outer_stride_name, std::to_string(v.outer_stride), ">= 1 (elements)");
  }
  if (v.inner > 1 && v.inner_stride < 1) {
    throw InvalidParameter(inner_stride_name, std::to_string(v.inner_stride), ">= 1 (elements)");
  }
  const std::size_t bytes = extent_bytes(v);
  if (written) {
    // Rows of distinct indices must not overlap: outer-major ([t][h]: heads side by side inside
    // a token) or inner-major ([h][t]).
    const bool inner_ok = v.inner == 1 || v.inner_stride >= v.row;
    const bool outer_major = inner_ok && (v.outer == 1 || v.outer_stride >= block(v));
    const bool inner_major = (v.outer == 1 || v.outer_stride >= v.row) &&
                             (v.inner == 1 || v.inner_stride >= checked_add(checked_mul(v.outer - 1, v.outer_stride, v, " extent"),
                                                                            v.row, v, " extent"));
    if (!outer_major && !inner_major) {
      throw InvalidParameter(std::string(v.name) + " strides", "(" + std::string(outer_stride_name) + " = " + std::to_string(v.outer_stride) +
                                                      ", " + inner_stride_name + " = " + std::to_string(v.inner_stride) + ")",
                             "rows that do not overlap (row length " + std::to_string(v.row) + ")");
    }
  }
  return bytes;
}

void check_disjoint(const StridedView& a, const StridedView& b) {
  check_disjoint(a, extent_bytes(a), b, extent_bytes(b));
}

void check_disjoint(const StridedView& a, std::size_t a_bytes, const StridedView& b, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return;
  const std::uintptr_t a0 = address(a), b0 = address(b);
  if (a0 + a_bytes <= b0 || b0 + b_bytes <= a0) return;
  // Overlapping ranges: fine only for views with the same outer count and stride whose
  // per-outer blocks sit in each other's gaps, at an element-aligned offset: a fused QKV buffer,
  // [token][Q heads, K heads, V heads], where K may have fewer heads than Q (grouped-query
  // attention). Within one period (the outer stride) a's block takes [0, span_a) and b's
  // [shift, shift + span_b); both repeat every period, so they never meet exactly when
  // span_a <= shift and shift + span_b <= period.
  const bool same_period = a.element_size == b.element_size && a.outer == b.outer && a.outer_stride == b.outer_stride;
  const auto size = static_cast<std::intptr_t>(a.element_size);
  const std::intptr_t offset = static_cast<std::intptr_t>(b0) - static_cast<std::intptr_t>(a0);
  if (same_period && offset % size == 0 && a.outer > 1 && a.outer_stride > 0) {
    const std::int64_t period = a.outer_stride;
    std::int64_t shift = (offset / size) % period;
    if (shift < 0) shift += period;
    if (shift >= block(a) && shift + block(b) <= period) return;
  }
  throw InvalidParameter(std::string(a.name) + " and " + b.name, "overlapping memory", "separate buffers (or the same buffer with the same strides, in place; or, in a fused buffer, rows interleaved with the same outer stride)");
}

}  // namespace posenc
