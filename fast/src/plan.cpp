// RopePlan (the frequencies as double-doubles, the step tables, a row by angle addition) and
// RopeCache (rows computed once, kept for a range of positions).
#include <algorithm>
#include <atomic>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "frequencies.hpp"
#include "kernels.hpp"
#include "output_size.hpp"
#include "rows.hpp"
#include "posenc/errors.hpp"
#include "posenc/fast/fast.hpp"

namespace posenc::fast {
namespace {

constexpr std::size_t kChunk = 64;  // pairs per pass of a row computed on the stack

// Keys the rows and anchors the driver keeps per thread (rope.cpp, FusedRows).
std::atomic<std::uint64_t> next_plan_id{1};

}  // namespace

using detail::check_position;
using detail::kernel_row_floats;
using detail::to_kernel_row;

RopePlan::RopePlan(const RopeParams& params) : params_(params), id_(next_plan_id.fetch_add(1)) {
  validate(params_);
  const auto f = formulas::rope_frequencies<long double>(params_);
  for (long double w : f.inv_freq) {
    const detail::SplitFrequency split = detail::split(w);
    w_hi_.push_back(split.hi);
    w_lo_.push_back(split.lo);
  }
  for (std::int64_t i = 0; i < pairs(); ++i) axis_.push_back(static_cast<int>(params_.pair_axis(i)));
  attention_ = static_cast<double>(f.attention_factor);
  // The step tables, by the scalar path's sincos (the same bits as every path's: kernels.hpp).
  const auto n = static_cast<std::size_t>(pairs());
  for (auto* table : {&step_c_, &step_s_, &coarse_c_, &coarse_s_}) table->resize(static_cast<std::size_t>(kSteps) * n);
  double position[kChunk], c[kChunk], s[kChunk];
  for (std::int64_t k = 0; k < kSteps; ++k) {
    for (std::size_t i0 = 0; i0 < n; i0 += kChunk) {
      const std::size_t m = std::min(kChunk, n - i0), at = static_cast<std::size_t>(k) * n + i0;
      std::fill_n(position, m, static_cast<double>(k));
      angles(position, i0, m, c, s, detail::scalar_kernels());
      for (std::size_t i = 0; i < m; ++i) {
        step_c_[at + i] = attention_ * c[i];
        step_s_[at + i] = attention_ * s[i];
      }
      std::fill_n(position, m, static_cast<double>(k * kSteps));
      angles(position, i0, m, coarse_c_.data() + at, coarse_s_.data() + at, detail::scalar_kernels());
    }
  }
}

void RopePlan::angles(const double* position, std::size_t i0, std::size_t m, double* c, double* s,
                      const detail::Kernels& k) const {
  k.sincos(position, w_hi_.data() + i0, w_lo_.data() + i0, s, c, m);
}

// Angle addition (generic/angle_sum.hpp, the same bits on every path): each SLEEF factor is
// within ~2^-51 of its value (u35 and the angle's tail, kernels.hpp); the anchor step's results
// within ~2^-49.5, the row's within ~2^-48.5 of the exact values, ~2^-24 of binary32's rounding
// unit at 1: the binary32 row is the correctly rounded one but where the exact value lies that
// close to a rounding boundary, as with SLEEF alone at every position.
void RopePlan::to_anchor(const double* cA, const double* sA, std::int64_t j, std::size_t i0, std::size_t m, double* c,
                         double* s, const detail::Kernels& k) const {
  const std::size_t at = static_cast<std::size_t>(j) * static_cast<std::size_t>(pairs()) + i0;
  k.angle_sum(cA, sA, coarse_c_.data() + at, coarse_s_.data() + at, m, c, s);
}

// The row's step (the attention factor in the table).
void RopePlan::stepped(const double* c0, const double* s0, std::int64_t step, std::size_t i0, std::size_t m,
                       float* cos_out, float* sin_out, const detail::Kernels& k) const {
  const std::size_t at = static_cast<std::size_t>(step) * static_cast<std::size_t>(pairs()) + i0;
  k.angle_sum_to_float(c0, s0, step_c_.data() + at, step_s_.data() + at, m, cos_out + i0, sin_out + i0);
}

void RopePlan::table_row(std::span<const std::int64_t> positions, std::span<float> cos_out, std::span<float> sin_out,
                         Isa isa) const {
  validate_rope_positions(params_, positions);
  for (auto p : positions) check_position(p, "rope.position");
  detail::check_floats("cos_out", cos_out.size(), 1, pairs());
  detail::check_floats("sin_out", sin_out.size(), 1, pairs());
  row_unchecked(positions.data(), cos_out.data(), sin_out.data(), detail::kernels(isa));
}

// A single-axis row from its coarse anchor and anchor (step_of, coarse_step_of); M-RoPE's axes
// move independently, so its rows take step 0 (the table's first entry: the attention factor
// times 1 and 0).
void RopePlan::row_unchecked(const std::int64_t* positions, float* cos_out, float* sin_out,
                             const detail::Kernels& k) const {
  double position[kChunk], s[kChunk], c[kChunk];
  const auto n = static_cast<std::size_t>(pairs());
  const bool single = params_.position_axes() == 1;
  const std::int64_t step = single ? step_of(positions[0]) : 0, j = single ? coarse_step_of(positions[0]) : 0;
  for (std::size_t i0 = 0; i0 < n; i0 += kChunk) {
    const std::size_t m = std::min(kChunk, n - i0);
    for (std::size_t i = 0; i < m; ++i) position[i] = static_cast<double>(positions[axis_[i0 + i]] - step - j * kSteps);
    angles(position, i0, m, c, s, k);
    if (single) to_anchor(c, s, j, i0, m, c, s, k);
    stepped(c, s, step, i0, m, cos_out, sin_out, k);
  }
}

RopeCache::RopeCache(RopePlan plan, std::int64_t first, std::int64_t count, Isa isa)
    : plan_(std::move(plan)), first_(first), count_(count) {
  if (plan_.params().position_axes() != 1) {
    throw InvalidParameter("rope.mrope_section", std::to_string(plan_.params().position_axes()) + " axes",
                           "empty: a cache is keyed by one position");
  }
  if (count < 1) throw InvalidParameter("cache.count", std::to_string(count), ">= 1");
  check_position(first, "cache.first");
  check_position(first + count - 1, "cache.first + count - 1");
  const std::size_t floats = kernel_row_floats(plan_), pairs = static_cast<std::size_t>(plan_.pairs());
  rows_.resize(static_cast<std::size_t>(count) * floats);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t position = first + i;
    float* row = rows_.data() + static_cast<std::size_t>(i) * floats;
    plan_.table_row({&position, 1}, {row, pairs}, {row + floats / 2, pairs}, isa);
    to_kernel_row(plan_, row, row + floats / 2);
  }
}

const float* RopeCache::row(std::int64_t position) const {
  if (position < first_ || position - first_ >= count_) {
    throw InvalidParameter("rope.position", std::to_string(position),
                           "in the cache's range [" + std::to_string(first_) + ", " + std::to_string(first_ + count_ - 1) + "]");
  }
  return rows_.data() + static_cast<std::size_t>(position - first_) * kernel_row_floats(plan_);
}

}  // namespace posenc::fast
