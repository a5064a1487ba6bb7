#pragma once
// Attention written the way careful kernels are (SPEC.md section 5's model of one): RoPE with
// angles formed in binary64 (or binary32, as Hugging Face forms them), q' and k' stored in the
// storage format (the KV cache), logits, an online softmax over blocks of keys and P V in the
// working format (binary32 for f32, bf16 and f16 storage, binary64 for f64), O and L rounded to
// the storage format. Options make it the mutants of documented bugs. The tests judge it on the
// shipped attention vectors: honest, it must pass; mutated, it must fail.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "posenc/formulas/rope_frequencies.hpp"
#include "posenc/judge/implementation.hpp"
#include "posenc/reference/reference.hpp"
#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance::testing {

// x rounded to nearest (ties to even) in format f: the nearest multiple of f's quantum at x's
// binade (exact power-of-two scaling, nearbyint in the default rounding mode), +-inf past the
// largest finite value.
inline double round_to(Format f, double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  const FormatSpec s = spec(f);
  const int quantum = std::max(std::ilogb(x) - s.precision + 1, s.min_quantum());
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  const double largest = std::ldexp(2 - std::ldexp(1.0, 1 - s.precision), s.emax);
  return std::fabs(r) > largest ? std::copysign(INFINITY, x) : r;
}

struct KernelOptions {
  bool float_angles = false;                   // frequencies and angles in binary32 (Hugging Face)
  std::optional<Format> probabilities;         // P rounded to this before P V (FlashAttention: bf16)
  bool rotate_q = true, rotate_k = true;       // RoPE on q only, or k only (fused-kernel bugs)
  std::int64_t query_offset = 0;               // q rotated at its position + offset (decode offset bug)
  bool drop_mscale = false;                    // DeepSeek's mscale^2 left out of the softmax scale
  std::optional<double> base;                  // rope_theta replaced (the base never reached the kernel)
  bool alibi_power_of_two = false;             // slopes 2^(-8(h+1)/n) for every head count
  bool rotate_all_dims = false;                // partial rotary rotating every dim of the head
  std::size_t block = 16;                      // keys per online-softmax block
  // Bugs the attention properties (SPEC.md section 6) catch, whatever the positions:
  bool ignore_scale = false;          // 1/sqrt(head_dim) even when the case gives its scale
  bool positions_from_index = false;  // token t rotated at its index in the case, not its position
  bool softmax_plus_one = false;      // exp(s_j) / (1 + sum_k exp(s_k)) (Miller's softmax1)
  std::optional<Format> values;       // v rounded to this before P V (a V cache in bf16)
  bool top_left_causal = false;       // causal row i sees keys 0..i (PyTorch's is_causal for n_q != n_k)
};

template <class T>
class AttentionKernel {
 public:
  AttentionKernel(const cases::Attention& a, Format storage, const KernelOptions& o) : a_(a), f_(storage), o_(o) {}

  std::vector<double> run() {
    const AttentionParams& p = a_.p;
    const auto d = static_cast<std::size_t>(p.head_dim), dv = static_cast<std::size_t>(p.value_dim);
    setup_rope();
    std::vector<std::vector<T>> keys;
    for (std::int64_t j = 0; j < a_.in.keys; ++j) {
      for (std::int64_t g = 0; g < p.kv_heads; ++g) {
        keys.push_back(rotate(a_.in.k.subspan(static_cast<std::size_t>(j * p.kv_heads + g) * d, d), a_.in.queries + j,
                              key_position(j), o_.rotate_k));
      }
    }
    const T scale = static_cast<T>(softmax_scale());
    std::vector<double> out(static_cast<std::size_t>(a_.in.queries * p.query_heads) * (dv + 1));
    const std::size_t l_start = static_cast<std::size_t>(a_.in.queries * p.query_heads) * dv;
    for (std::int64_t i = 0; i < a_.in.queries; ++i) {
      for (std::int64_t h = 0; h < p.query_heads; ++h) {
        const std::size_t row = static_cast<std::size_t>(i * p.query_heads + h);
        auto position = query_position(i);
        position[0] += o_.query_offset;
        const auto q = rotate(a_.in.q.subspan(row * d, d), i, position, o_.rotate_q);
        const std::int64_t g = p.kv_head(h);
        // The online softmax (Milakov and Gimelshein 2018; FlashAttention's loop).
        T running_max = -std::numeric_limits<T>::infinity(), sum = 0;
        std::vector<T> acc(dv, 0);
        std::vector<std::int64_t> visible;
        for (std::int64_t j = 0; j < a_.in.keys; ++j) {
          const bool top_left = o_.top_left_causal && p.mask == AttentionMask::causal;
          if (top_left ? j <= i : attention_visible(p, a_.in, i, j)) visible.push_back(j);
        }
        for (std::size_t start = 0; start < visible.size(); start += o_.block) {
          const std::size_t end = std::min(visible.size(), start + o_.block);
          std::vector<T> s;
          T block_max = running_max;
          for (std::size_t n = start; n < end; ++n) {
            const std::int64_t j = visible[n];
            const auto& k = keys[static_cast<std::size_t>(j * p.kv_heads + g)];
            T dot = 0;
            for (std::size_t e = 0; e < d; ++e) dot += q[e] * k[e];
            T logit = dot * scale;
            if (p.alibi) logit += bias(h, position[0] - o_.query_offset, key_position(j)[0]);
            s.push_back(logit);
            block_max = std::max(block_max, logit);
          }
          const T alpha = std::exp(running_max - block_max);
          sum *= alpha;
          for (auto& x : acc) x *= alpha;
          for (std::size_t n = start; n < end; ++n) {
            T w = std::exp(s[n - start] - block_max);
            sum += w;
            if (o_.probabilities) w = static_cast<T>(round_to(*o_.probabilities, w));
            const double* v = &a_.in.v[static_cast<std::size_t>(visible[n] * p.kv_heads + g) * dv];
            for (std::size_t e = 0; e < dv; ++e) {
              acc[e] += w * static_cast<T>(o_.values ? round_to(*o_.values, v[e]) : v[e]);
            }
          }
          running_max = block_max;
        }
        if (o_.softmax_plus_one) sum += std::exp(-running_max);
        for (std::size_t e = 0; e < dv; ++e) out[row * dv + e] = round_to(f_, static_cast<double>(acc[e] / sum));
        out[l_start + row] = round_to(f_, static_cast<double>(running_max + std::log(sum)));
      }
    }
    return out;
  }

 private:
  std::vector<std::int64_t> query_position(std::int64_t i) const {
    const auto axes = static_cast<std::size_t>(a_.p.position_axes());
    if (o_.positions_from_index) return std::vector<std::int64_t>(axes, a_.in.keys - a_.in.queries + i);
    auto s = a_.in.query_positions.subspan(static_cast<std::size_t>(i) * axes, axes);
    return {s.begin(), s.end()};
  }
  std::vector<std::int64_t> key_position(std::int64_t j) const {
    const auto axes = static_cast<std::size_t>(a_.p.position_axes());
    if (o_.positions_from_index) return std::vector<std::int64_t>(axes, j);
    auto s = a_.in.key_positions.subspan(static_cast<std::size_t>(j) * axes, axes);
    return {s.begin(), s.end()};
  }

  long double softmax_scale() const {
    const AttentionParams& p = a_.p;
    if (p.scale && !o_.ignore_scale) return *p.scale;
    long double s = 1 / std::sqrt(p.scale_denominator ? static_cast<long double>(*p.scale_denominator)
                                                      : static_cast<long double>(p.head_dim));
    if (p.scale_mscale_all_dim && !o_.drop_mscale) {
      const long double g =
          formulas::rope_detail::yarn_mscale<long double>(*p.rope->scaling.factor, *p.scale_mscale_all_dim);
      s *= g * g;
    }
    return s;
  }

  T bias(std::int64_t h, std::int64_t query, std::int64_t key) const {
    const AlibiParams& alibi = *a_.p.alibi;
    AlibiSlopeExponent e = alibi_slope_exponent(alibi, h);
    if (o_.alibi_power_of_two) e = {-8 * (h + 1), alibi.n_heads};
    const T slope = std::exp2(static_cast<T>(e.numerator) / static_cast<T>(e.denominator));
    std::int64_t distance = query - key;
    if (alibi.mode == AlibiMode::symmetric) distance = std::llabs(distance);
    return -slope * static_cast<T>(distance);
  }

  void setup_rope() {
    if (!a_.p.rope || a_.p.rope_table_given) return;
    rope_ = *a_.p.rope;
    if (o_.base) rope_.base = *o_.base;
    if (o_.rotate_all_dims && rope_.scaling.short_factor.empty()) rope_.rotary_dim = rope_.head_dim;
    if (o_.float_angles) {
      const auto f = formulas::rope_frequencies<float>(rope_);
      inv_freq_.assign(f.inv_freq.begin(), f.inv_freq.end());
      attention_factor_ = f.attention_factor;
    } else {
      const auto f = reference::rope_frequencies(rope_);
      for (std::size_t i = 0; i + 1 < f.size(); ++i) inv_freq_.push_back(f[i].f64());
      attention_factor_ = f.back().f64();
    }
  }

  // x rotated at `position` (token t of the case: queries, then keys, for a given table) and
  // stored in the storage format.
  std::vector<T> rotate(std::span<const double> x, std::int64_t token, const std::vector<std::int64_t>& position,
                        bool apply) const {
    std::vector<T> y(x.begin(), x.end());
    const auto& p = a_.p;
    if (p.rope && apply) {
      const RopeParams& r = p.rope_table_given ? *p.rope : rope_;
      const auto pairs = static_cast<std::size_t>(r.pair_count());
      for (std::size_t i = 0; i < pairs; ++i) {
        T c = 0, s = 0;
        if (p.rope_table_given) {
          c = static_cast<T>(a_.in.table[static_cast<std::size_t>(token) * 2 * pairs + i]);
          s = static_cast<T>(a_.in.table[static_cast<std::size_t>(token) * 2 * pairs + pairs + i]);
        } else {
          const auto axis = static_cast<std::size_t>(r.pair_axis(static_cast<std::int64_t>(i)));
          if (o_.float_angles) {
            const float angle = static_cast<float>(position[axis]) * static_cast<float>(inv_freq_[i]);
            c = static_cast<T>(std::cos(angle) * static_cast<float>(attention_factor_));
            s = static_cast<T>(std::sin(angle) * static_cast<float>(attention_factor_));
          } else {
            const double angle = static_cast<double>(static_cast<long double>(position[axis]) * inv_freq_[i]);
            c = static_cast<T>(std::cos(angle) * attention_factor_);
            s = static_cast<T>(std::sin(angle) * attention_factor_);
          }
        }
        if (r.inverse) s = -s;
        const auto first = static_cast<std::size_t>(r.pair_first(static_cast<std::int64_t>(i)));
        const auto second = static_cast<std::size_t>(r.pair_second(static_cast<std::int64_t>(i)));
        const T xa = y[first], xb = y[second];
        y[first] = xa * c - xb * s;
        y[second] = xa * s + xb * c;
      }
      for (auto& v : y) v = static_cast<T>(round_to(f_, static_cast<double>(v)));
    }
    return y;
  }

  const cases::Attention& a_;
  Format f_;
  KernelOptions o_;
  RopeParams rope_;
  std::vector<double> inv_freq_;
  double attention_factor_ = 1;
};

// The kernel as an implementation under test: attention cases only, in every format.
class AttentionKernelImplementation final : public Implementation {
 public:
  AttentionKernelImplementation(std::string name, KernelOptions o) : name_(std::move(name)), o_(o) {}
  std::string name() const override { return name_; }
  std::vector<Outcome> run(const VectorGroup& g, const VectorCase& c, std::span<const Format> formats) override {
    std::vector<Outcome> out;
    for (Format f : formats) {
      Outcome o;
      if (g.type != CaseType::attention) {
        out.push_back(o);
        continue;
      }
      const auto a = std::get<cases::Attention>(typed_case(g, c));
      try {
        validate(a.p, a.in);
      } catch (const InvalidParameter& e) {
        o.status = Status::invalid;
        o.message = e.what();
        out.push_back(o);
        continue;
      }
      o.status = Status::ok;
      o.values = f == Format::f64 ? AttentionKernel<double>(a, f, o_).run() : AttentionKernel<float>(a, f, o_).run();
      out.push_back(std::move(o));
    }
    return out;
  }

 private:
  std::string name_;
  KernelOptions o_;
};

}  // namespace posenc::conformance::testing
