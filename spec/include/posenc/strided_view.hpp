#pragma once
// Checks of a caller's strided tensor before anything is read or written (the fast path and the
// reference plugin share them): sizes whose extent
// overflows, strides below 1, rows that overlap in a tensor that is written, and two tensors
// that share memory (Q with K, an output with another tensor's input). Refused with an
// InvalidParameter naming the parameter, never undefined behaviour.
#include <cstddef>
#include <cstdint>

namespace posenc {

// A [outer][inner][row] view of elements of `element_size` bytes at `base`.
struct StridedView {
  const char* name;  // e.g. "q.out", used in the error messages (strings are built only for them)
  const void* base;
  std::int64_t outer, inner, row;
  std::int64_t outer_stride, inner_stride;  // in elements
  std::size_t element_size;
};

// Strides >= 1 where their dimension has more than one index (the names are the parameters'),
// the extent representable in bytes, and, for a view that is written, rows of distinct indices
// disjoint (outer-major or inner-major). Returns the extent in bytes (0 for an empty view).
std::size_t check_view(const StridedView& v, const char* outer_stride_name, const char* inner_stride_name, bool written);

// a and b touch no common element. Views with the same outer count and stride may interleave
// (a fused QKV buffer: K's rows in the gaps between Q's, with as many heads as Q or fewer);
// anything else must not overlap at all. Both views must have passed check_view.
void check_disjoint(const StridedView& a, const StridedView& b);
// The same, given the extents check_view returned for them (a call that checks several pairs
// computes each extent once).
void check_disjoint(const StridedView& a, std::size_t a_bytes, const StridedView& b, std::size_t b_bytes);

}  // namespace posenc
