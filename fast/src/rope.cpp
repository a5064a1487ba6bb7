// The RoPE driver shared by every ISA path: plan (frequencies as double-doubles), per-token
// cos/sin rows, the expanded row the rotation kernels read, threads and validation.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "frequencies.hpp"
#include "kernels.hpp"
#include "posenc/errors.hpp"
#include "posenc/strided_view.hpp"

namespace posenc::fast {
namespace {

using detail::kernels;

std::size_t span_of(const RopePlan& plan) { return static_cast<std::size_t>(plan.params().rotated_span()); }

void check_position(std::int64_t position, const char* name) {
  if (position < -kMaxPosition || position > kMaxPosition) {
    throw InvalidParameter(name, std::to_string(position), "in [-2^32, 2^32] (the fast path's accurate range)");
  }
}

// Turn per-pair (cos, sin) into the rows of y[j] = x[j] C[j] + x[partner(j)] S[j]; the inverse
// rotation is the rotation by the negated angle.
void expand(const RopePlan& plan, const float* c, const float* s, float* C, float* S) {
  const RopeParams& p = plan.params();
  for (std::int64_t i = 0; i < plan.pairs(); ++i) {
    const auto a = static_cast<std::size_t>(p.pair_first(i)), b = static_cast<std::size_t>(p.pair_second(i));
    const auto k = static_cast<std::size_t>(i);
    const float sine = p.inverse ? -s[k] : s[k];
    C[a] = C[b] = c[k];
    S[a] = -sine;
    S[b] = sine;
  }
}

struct Scratch {
  std::vector<float> c, s, C, S;
  explicit Scratch(const RopePlan& plan)
      : c(static_cast<std::size_t>(plan.pairs())), s(c.size()), C(span_of(plan)), S(span_of(plan)) {}
};

void check_tensor(const RopeTensor& t, const char* name, bool required) {
  if (!required && !t.in) return;
  if (!t.in || !t.out) throw InvalidParameter(std::string(name) + ".in/out", "null", "non-null pointers");
}

StridedView input_view(const RopeTensor& t, const std::string& name, DType d, std::int64_t n_tokens,
                               std::int64_t n_heads, std::int64_t head_dim) {
  return {name + ".in", t.in, n_tokens, n_heads, head_dim, t.in_token_stride, t.in_head_stride, size_of(d)};
}
StridedView output_view(const RopeTensor& t, const std::string& name, DType d, std::int64_t n_tokens,
                                std::int64_t n_heads, std::int64_t head_dim) {
  return {name + ".out", t.out, n_tokens, n_heads, head_dim, t.out_token_stride, t.out_head_stride, size_of(d)};
}

// Sizes, strides and aliasing of Q and K (SPEC: in place means the same buffer with the same
// strides; Q and K may share a fused buffer only as disjoint, identically strided rows).
void check_layout(DType d, std::int64_t n_tokens, std::int64_t n_heads, std::int64_t head_dim, const RopeTensor& q,
                  const RopeTensor& k) {
  std::vector<StridedView> ins, outs;
  for (const auto& [t, name] : {std::pair{&q, "q"}, std::pair{&k, "k"}}) {
    if (!t->in) continue;
    ins.push_back(input_view(*t, name, d, n_tokens, n_heads, head_dim));
    outs.push_back(output_view(*t, name, d, n_tokens, n_heads, head_dim));
    const std::string prefix = std::string(name) + ".";
    check_view(ins.back(), prefix + "in_token_stride", prefix + "in_head_stride", false);
    check_view(outs.back(), prefix + "out_token_stride", prefix + "out_head_stride", true);
    const bool in_place = t->in == t->out && t->in_token_stride == t->out_token_stride &&
                          t->in_head_stride == t->out_head_stride;
    if (!in_place) check_disjoint(ins.back(), outs.back());
  }
  if (outs.size() == 2) {
    check_disjoint(outs[0], outs[1]);
    check_disjoint(outs[0], ins[1]);
    check_disjoint(outs[1], ins[0]);
  }
}

// Rotate one token's heads of one tensor with the expanded row (C, S).
void rotate_token(const detail::Kernels& k, const RopePlan& plan, DType d, std::int64_t t, std::int64_t n_heads,
                  const RopeTensor& x, const float* C, const float* S) {
  const RopeParams& p = plan.params();
  const std::size_t size = size_of(d);
  const auto span = p.rotated_span();
  const bool interleaved = p.layout == RopeLayout::interleaved;
  for (std::int64_t h = 0; h < n_heads; ++h) {
    const auto* in = static_cast<const char*>(x.in) + static_cast<std::size_t>(t * x.in_token_stride + h * x.in_head_stride) * size;
    auto* out = static_cast<char*>(x.out) + static_cast<std::size_t>(t * x.out_token_stride + h * x.out_head_stride) * size;
    k.rotate(d, interleaved, span, C, S, in, out);
    if (in != out && p.head_dim > span) {
      std::memcpy(out + static_cast<std::size_t>(span) * size, in + static_cast<std::size_t>(span) * size,
                  static_cast<std::size_t>(p.head_dim - span) * size);
    }
  }
}

// Split [0, n) into `threads` contiguous ranges; every token's result is independent of the split.
template <class F>
void parallel_tokens(std::int64_t n, int threads, F work) {
  if (threads < 1) throw InvalidParameter("threads", std::to_string(threads), ">= 1");
  const std::int64_t parts = std::min<std::int64_t>(threads, std::max<std::int64_t>(n, 1));
  if (parts == 1) return work(std::int64_t{0}, n);
  std::vector<std::thread> pool;
  for (std::int64_t i = 1; i < parts; ++i) pool.emplace_back(work, n * i / parts, n * (i + 1) / parts);
  work(0, n / parts);
  for (auto& th : pool) th.join();
}

void check_call(const RopePlan& plan, DType d, std::int64_t n_tokens, std::int64_t n_heads,
                const std::int64_t* positions, const RopeTensor& q, const RopeTensor& k) {
  if (static_cast<int>(d) < 0 || static_cast<int>(d) > 2) throw InvalidParameter("dtype", std::to_string(static_cast<int>(d)), "f32, bf16 or f16");
  if (n_tokens < 0) throw InvalidParameter("n_tokens", std::to_string(n_tokens), ">= 0");
  if (n_heads < 1) throw InvalidParameter("n_heads", std::to_string(n_heads), ">= 1");
  if (n_tokens > 0 && !positions) throw InvalidParameter("positions", "null", "non-null");
  const std::int64_t axes = plan.params().position_axes();
  if (n_tokens > std::numeric_limits<std::ptrdiff_t>::max() / 8 / axes) {
    throw InvalidParameter("n_tokens", std::to_string(n_tokens), "a count whose positions array fits in memory");
  }
  check_tensor(q, "q", true);
  check_tensor(k, "k", false);
  check_layout(d, n_tokens, n_heads, plan.params().head_dim, q, k);
}

}  // namespace

std::string_view to_string(DType d) {
  switch (d) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "f16";
  }
  return "?";
}

std::size_t size_of(DType d) { return d == DType::f32 ? 4 : 2; }

RopePlan::RopePlan(const RopeParams& params) : params_(params) {
  validate(params_);
  const auto f = detail::rope_frequencies(params_);
  for (long double w : f.inv_freq) inv_freq_.push_back(detail::split(w));
  for (std::int64_t i = 0; i < pairs(); ++i) axis_.push_back(static_cast<int>(params_.pair_axis(i)));
  attention_ = static_cast<double>(f.attention);
}

void RopePlan::table_row(std::span<const std::int64_t> positions, float* cos_out, float* sin_out, Isa isa) const {
  validate_rope_positions(params_, positions);
  for (auto p : positions) check_position(p, "rope.position");
  row_unchecked(positions.data(), cos_out, sin_out, detail::kernels(isa));
}

void RopePlan::row_unchecked(const std::int64_t* positions, float* cos_out, float* sin_out,
                             const detail::Kernels& k) const {
  const auto n = static_cast<std::size_t>(pairs());
  // Scratch on the stack for the usual sizes (head_dim <= 512); the heap beyond.
  double small[4 * 256];
  std::vector<double> large(n > 256 ? 4 * n : 0);
  double* hi = n > 256 ? large.data() : small;
  double *lo = hi + n, *s = lo + n, *c = s + n;
  for (std::size_t i = 0; i < n; ++i) {
    detail::angle(static_cast<double>(positions[axis_[i]]), inv_freq_[i], hi[i], lo[i]);
  }
  k.sincos(hi, lo, s, c, n);
  for (std::size_t i = 0; i < n; ++i) {
    cos_out[i] = static_cast<float>(attention_ * c[i]);
    sin_out[i] = static_cast<float>(attention_ * s[i]);
  }
}

RopeCache::RopeCache(const RopePlan& plan, std::int64_t first, std::int64_t count, Isa isa)
    : plan_(plan), first_(first), count_(count) {
  if (plan.params().position_axes() != 1) {
    throw InvalidParameter("rope.mrope_section", std::to_string(plan.params().position_axes()) + " axes",
                           "empty: a cache is keyed by one position");
  }
  if (count < 1) throw InvalidParameter("cache.count", std::to_string(count), ">= 1");
  check_position(first, "cache.first");
  check_position(first + count - 1, "cache.first + count - 1");
  const std::size_t span = span_of(plan);
  rows_.resize(static_cast<std::size_t>(count) * 2 * span);
  Scratch scratch(plan);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t position = first + i;
    plan.table_row({&position, 1}, scratch.c.data(), scratch.s.data(), isa);
    float* row = rows_.data() + static_cast<std::size_t>(i) * 2 * span;
    expand(plan, scratch.c.data(), scratch.s.data(), row, row + span);
  }
}

const float* RopeCache::row(std::int64_t position) const {
  if (position < first_ || position - first_ >= count_) {
    throw InvalidParameter("rope.position", std::to_string(position),
                           "in the cache's range [" + std::to_string(first_) + ", " + std::to_string(first_ + count_ - 1) + "]");
  }
  return rows_.data() + static_cast<std::size_t>(position - first_) * 2 * span_of(plan_);
}

void rope_apply(const RopePlan& plan, DType d, std::int64_t n_tokens, std::int64_t n_heads, const std::int64_t* positions,
                const RopeTensor& q, const RopeTensor& k, const Options& options) {
  check_call(plan, d, n_tokens, n_heads, positions, q, k);
  const auto& kern = kernels(options.isa);
  const std::int64_t axes = plan.params().position_axes();
  for (std::int64_t i = 0; i < n_tokens * axes; ++i) check_position(positions[i], "rope.position");  // before any write
  parallel_tokens(n_tokens, options.threads, [&](std::int64_t begin, std::int64_t end) {
    Scratch scratch(plan);
    for (std::int64_t t = begin; t < end; ++t) {
      plan.row_unchecked(positions + t * axes, scratch.c.data(), scratch.s.data(), kern);
      expand(plan, scratch.c.data(), scratch.s.data(), scratch.C.data(), scratch.S.data());
      rotate_token(kern, plan, d, t, n_heads, q, scratch.C.data(), scratch.S.data());
      if (k.in) rotate_token(kern, plan, d, t, n_heads, k, scratch.C.data(), scratch.S.data());
    }
  });
}

void rope_apply(const RopeCache& cache, DType d, std::int64_t n_tokens, std::int64_t n_heads, const std::int64_t* positions,
                const RopeTensor& q, const RopeTensor& k, const Options& options) {
  check_call(cache.plan(), d, n_tokens, n_heads, positions, q, k);
  for (std::int64_t t = 0; t < n_tokens; ++t) (void)cache.row(positions[t]);  // every position before any write
  const auto& kern = kernels(options.isa);
  const std::size_t span = span_of(cache.plan());
  parallel_tokens(n_tokens, options.threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t t = begin; t < end; ++t) {
      const float* row = cache.row(positions[t]);
      rotate_token(kern, cache.plan(), d, t, n_heads, q, row, row + span);
      if (k.in) rotate_token(kern, cache.plan(), d, t, n_heads, k, row, row + span);
    }
  });
}

}  // namespace posenc::fast
