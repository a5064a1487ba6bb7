// The refusals of posenc/strided_view.hpp's inline checks, out of line and cold.
#include "posenc/strided_view.hpp"

#include <string>

#include "posenc/errors.hpp"

namespace posenc::strided_view_detail {

void overflow(const StridedView& v, const char* suffix, std::int64_t a, const char* op, std::int64_t b,
              const char* allowed) {
  throw InvalidParameter(std::string(v.name) + suffix, std::to_string(a) + " " + op + " " + std::to_string(b), allowed);
}

void beyond_address_space(const StridedView& v, std::int64_t bytes) {
  throw InvalidParameter(v.name, std::to_string(bytes) + " bytes from its base", "an extent inside the address space");
}

void stride_below_one(const char* name, std::int64_t stride) {
  throw InvalidParameter(name, std::to_string(stride), ">= 1 (elements)");
}

void rows_overlap(const StridedView& v, const char* outer_stride_name, const char* inner_stride_name) {
  throw InvalidParameter(std::string(v.name) + " strides", "(" + std::string(outer_stride_name) + " = " + std::to_string(v.outer_stride) +
                                                  ", " + inner_stride_name + " = " + std::to_string(v.inner_stride) + ")",
                         "rows that do not overlap (row length " + std::to_string(v.row) + ")");
}

void views_overlap(const StridedView& a, const StridedView& b) {
  throw InvalidParameter(std::string(a.name) + " and " + b.name, "overlapping memory", "separate buffers (or the same buffer with the same strides, in place; or, in a fused buffer, rows interleaved with the same outer stride)");
}

}  // namespace posenc::strided_view_detail
