#pragma once
// Checks of a caller's strided tensor before anything is read or written (the fast path and the
// reference plugin share them): sizes whose extent
// overflows, strides below 1, rows that overlap in a tensor that is written, and two tensors
// that share memory (Q with K, an output with another tensor's input). Refused with an
// InvalidParameter naming the parameter, never undefined behaviour.
// The checks are inline, so that a caller's compiler keeps a view's fields in registers and
// folds what it knows of them; every refusal is out of line and cold (strided_view.cpp), so that
// a call pays for an error's strings only when it throws. (A call of the fast path of 1 token x 1
// head spends ~3 ns on its layout checks so, ~11 of its ~65 with check_view and check_disjoint
// called out of line and its views in arrays: fast/src/rope.cpp, check_layout.)
#include <cstddef>
#include <cstdint>
#include <limits>

namespace posenc {

// A [outer][inner][row] view of elements of `element_size` bytes at `base`.
struct StridedView {
  const char* name;  // e.g. "q.out", used in the error messages (strings are built only for them)
  const void* base;
  std::int64_t outer, inner, row;
  std::int64_t outer_stride, inner_stride;  // in elements
  std::size_t element_size;
};

namespace strided_view_detail {

// The refusals (strided_view.cpp).
[[noreturn, gnu::cold, gnu::noinline]] void overflow(const StridedView& v, const char* suffix, std::int64_t a,
                                                     const char* op, std::int64_t b, const char* allowed);
[[noreturn, gnu::cold, gnu::noinline]] void beyond_address_space(const StridedView& v, std::int64_t bytes);
[[noreturn, gnu::cold, gnu::noinline]] void stride_below_one(const char* name, std::int64_t stride);
[[noreturn, gnu::cold, gnu::noinline]] void rows_overlap(const StridedView& v, const char* outer_stride_name,
                                                         const char* inner_stride_name);
[[noreturn, gnu::cold, gnu::noinline]] void views_overlap(const StridedView& a, const StridedView& b);

constexpr auto kMaxBytes = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());

// `suffix` follows v.name in the parameter an overflow is reported against.
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
inline std::int64_t block(const StridedView& v) {
  return checked_add(checked_mul(v.inner - 1, v.inner_stride, v, " extent"), v.row, v, " extent");
}

inline std::uintptr_t address(const StridedView& v) { return reinterpret_cast<std::uintptr_t>(v.base); }

inline std::size_t extent_bytes(const StridedView& v) {
  if (v.outer == 0 || v.inner == 0 || v.row == 0) return 0;
  const std::int64_t elements = checked_add(checked_mul(v.outer - 1, v.outer > 1 ? v.outer_stride : 0, v, " extent"),
                                            block(v), v, " extent");
  const std::int64_t bytes = checked_mul(elements, static_cast<std::int64_t>(v.element_size), v, " extent in bytes");
  if (static_cast<std::uint64_t>(bytes) > kMaxBytes - address(v)) [[unlikely]] beyond_address_space(v, bytes);
  return static_cast<std::size_t>(bytes);
}

}  // namespace strided_view_detail

// Strides >= 1 where their dimension has more than one index (the names are the parameters'),
// the extent representable in bytes, and, for a view that is written, rows of distinct indices
// disjoint (outer-major or inner-major). Returns the extent in bytes (0 for an empty view).
inline std::size_t check_view(const StridedView& v, const char* outer_stride_name, const char* inner_stride_name,
                              bool written) {
  using namespace strided_view_detail;
  if (v.outer == 0 || v.inner == 0 || v.row == 0) return 0;
  if (v.outer > 1 && v.outer_stride < 1) [[unlikely]] stride_below_one(outer_stride_name, v.outer_stride);
  if (v.inner > 1 && v.inner_stride < 1) [[unlikely]] stride_below_one(inner_stride_name, v.inner_stride);
  const std::size_t bytes = extent_bytes(v);
  if (written) {
    // Rows of distinct indices must not overlap: outer-major ([t][h]: heads side by side inside
    // a token) or inner-major ([h][t]).
    const bool inner_ok = v.inner == 1 || v.inner_stride >= v.row;
    const bool outer_major = inner_ok && (v.outer == 1 || v.outer_stride >= block(v));
    const bool inner_major = (v.outer == 1 || v.outer_stride >= v.row) &&
                             (v.inner == 1 || v.inner_stride >= checked_add(checked_mul(v.outer - 1, v.outer_stride, v, " extent"),
                                                                            v.row, v, " extent"));
    if (!outer_major && !inner_major) [[unlikely]] rows_overlap(v, outer_stride_name, inner_stride_name);
  }
  return bytes;
}

// a and b touch no common element, given the extents check_view returned for them. Views with
// the same outer count and stride may interleave (a fused QKV buffer: K's rows in the gaps
// between Q's, with as many heads as Q or fewer); anything else must not overlap at all.
inline void check_disjoint(const StridedView& a, std::size_t a_bytes, const StridedView& b, std::size_t b_bytes) {
  using namespace strided_view_detail;
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
  views_overlap(a, b);
}

// The same, both views having passed check_view.
inline void check_disjoint(const StridedView& a, const StridedView& b) {
  check_disjoint(a, strided_view_detail::extent_bytes(a), b, strided_view_detail::extent_bytes(b));
}

}  // namespace posenc
