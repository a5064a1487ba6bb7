#pragma once
// posenc fast: the optimized implementation. One interface, three instruction-set paths
// (scalar, AVX2+FMA, AVX-512), chosen at run time from CPUID or forced with POSENC_ISA.
//
// Accuracy contract (checked by `posenc conform --profile strict`): frequencies are derived in
// long double from the same formulas as the reference; each angle p * w is formed exactly enough
// (w as a double-double, the product with FMA) and its sine and cosine come from SLEEF's
// deterministic 3.5-ulp double kernels (finz u35: relative error ~2^-51, invisible after the
// rounding to binary32, and twice as fast as the 1-ulp ones), so every cos/sin entry is within
// about one ulp of binary32 for every |position| <= kMaxPosition. Rotation, storage conversion
// (round to nearest even) and the order of operations are the same on every path, for any
// thread count and store mode: outputs are bit-identical across all of them (a NaN's payload
// aside: NaN in, NaN out for its pair, as SPEC 2.3 says, payload not compared).
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "posenc/params.hpp"

namespace posenc::fast {

namespace detail {
struct Kernels;
class FusedRows;
class LastBlockCall;

// Storage on 64-byte boundaries (cache lines, and the AVX-512 path's vector width), for the
// cos/sin rows the kernels load.
template <class T>
struct LineAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  LineAligned() = default;
  template <class U>
  LineAligned(const LineAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  bool operator==(const LineAligned&) const = default;
  struct Delete {  // for unique_ptr<T[], Delete> of allocate()'s storage
    void operator()(T* p) const { ::operator delete(p, kAlign); }
  };
};
}  // namespace detail

enum class Isa { scalar, avx2, avx512 };
std::string_view to_string(Isa isa);
Isa parse_isa(std::string_view s);
// The best path this CPU and OS support (AVX-512 needs AVX512F/BW/VL and the OS's ZMM state).
Isa best_isa();
bool isa_supported(Isa isa);
std::vector<Isa> supported_isas();
// POSENC_ISA=scalar|avx2|avx512 when set (an error naming POSENC_ISA's value and the allowed
// values if unknown or unsupported here), else best_isa(). The variable is read once per process
// (the first call, thread-safe), so a hot call pays no getenv and every call agrees; a bad value
// is reported by every call that resolves the ISA, never by building an Options.
Isa selected_isa();

// Storage formats of tensors; compute is binary32.
enum class DType { f32, bf16, f16 };
std::string_view to_string(DType d);
inline std::size_t size_of(DType d) { return d == DType::f32 ? 4 : 2; }

// |position| up to 2^32: the domain over which the angle is formed accurately (see above).
inline constexpr std::int64_t kMaxPosition = std::int64_t{1} << 32;

// How RoPE writes an out-of-place result. Non-temporal (streaming) stores send it to memory
// without first reading its lines into the cache: a third less memory traffic when the output
// does not fit in the cache anyway, but a consumer that reads it next finds it out of cache.
// automatic streams when the call's reads and writes (twice its outputs) exceed the core's
// own L2 cache (Linux sysfs; in place, never): larger outputs leave the core's caches anyway.
// The values written are the same in every mode.
enum class Stores { automatic, cached, streaming };

struct Options {
  // Empty: selected_isa(), resolved by the call that uses it (so that Options{} never throws:
  // a bad POSENC_ISA is the call's error, reported where it can be handled).
  std::optional<Isa> isa;
  // >= 1; tokens are shared by the calling thread and up to threads - 1 workers, started by the
  // first call that needs them and kept (idle ones poll ~100 us, then sleep); a worker that has
  // not started when the others have done every token is not waited for.
  int threads = 1;
  Stores stores = Stores::automatic;
};

struct RopeTensor;

// A RoPE configuration derived once: per pair the frequency as a double-double, the attention
// factor, the element pairing. Validates the parameters.
class RopePlan {
 public:
  explicit RopePlan(const RopeParams& params);
  const RopeParams& params() const { return params_; }
  std::int64_t pairs() const { return static_cast<std::int64_t>(w_hi_.size()); }
  double inv_freq(std::int64_t i) const { return w_hi_[static_cast<std::size_t>(i)]; }
  double attention_factor() const { return attention_; }

  // cos and sin of pair i's angle at `positions` (one per axis), times the attention factor,
  // rounded to binary32: the rows of the table every rotation uses. cos_out and sin_out must
  // hold exactly pairs() floats (an InvalidParameter naming them otherwise: a size mismatch is
  // a caller's bug, never a silent partial row).
  void table_row(std::span<const std::int64_t> positions, std::span<float> cos_out, std::span<float> sin_out,
                 Isa isa) const;

 private:
  // A row of a single-axis plan at position p comes by angle addition in binary64
  // (generic/angle_sum.hpp) from the accurate sin/cos of its coarse anchor
  // A = p - (p mod kSteps^2), in two steps: to the anchor a = p - (p mod kSteps) = A + kSteps j
  // with a table of the angles kSteps j w (to_anchor), then to p = a + k with a table of k w
  // times the attention factor (stepped). The same bits for p whichever call, path or thread
  // computes it.
  static constexpr std::int64_t kSteps = 16;
  static constexpr std::int64_t step_of(std::int64_t p) { return (p % kSteps + kSteps) % kSteps; }
  static constexpr std::int64_t coarse_step_of(std::int64_t p) {
    constexpr std::int64_t coarse = kSteps * kSteps;
    return (p % coarse + coarse) % coarse / kSteps;
  }
  // table_row without validation, for rope_apply, which checks every position before any write.
  void row_unchecked(const std::int64_t* positions, float* cos_out, float* sin_out, const detail::Kernels& k) const;
  // Pairs [i0, i0 + m): c, s = cos and sin of the angles at `position` (one per pair, binary64,
  // before the attention factor).
  void angles(const double* position, std::size_t i0, std::size_t m, double* c, double* s, const detail::Kernels& k) const;
  // Pairs [i0, i0 + m) at A + kSteps j from the coarse anchor A's cA, sA (indexed from i0; c, s
  // may be cA, sA).
  void to_anchor(const double* cA, const double* sA, std::int64_t j, std::size_t i0, std::size_t m, double* c,
                 double* s, const detail::Kernels& k) const;
  // Pairs [i0, i0 + m) of the row at anchor + step, from the anchor's c0, s0 (indexed from i0); k's angle
  // addition (every path's gives the same bits).
  void stepped(const double* c0, const double* s0, std::int64_t step, std::size_t i0, std::size_t m, float* cos_out,
               float* sin_out, const detail::Kernels& k) const;
  friend class detail::FusedRows;
  friend class detail::LastBlockCall;

  RopeParams params_;
  // Unique per construction (a copy shares it with the values it copies): keys the thread's
  // kept anchors and rows in rope.cpp.
  std::uint64_t id_;
  std::vector<double> w_hi_, w_lo_;  // per pair, the frequency as a double-double
  std::vector<int> axis_;
  double attention_ = 1;
  // [kSteps][pairs]: the attention factor times cos(k w) and sin(k w), k in [0, kSteps); and
  // cos(kSteps j w) and sin(kSteps j w), j in [0, kSteps).
  std::vector<double> step_c_, step_s_, coarse_c_, coarse_s_;
};

// A tensor [tokens][heads][head_dim] in `dtype`, with strides in elements. `in` may equal `out`
// (in place: the tail past the rotated span is then left untouched; out of place it is copied).
struct RopeTensor {
  const void* in = nullptr;
  void* out = nullptr;
  std::int64_t in_token_stride = 0, in_head_stride = 0;
  std::int64_t out_token_stride = 0, out_head_stride = 0;
  // This tensor's head count; 0: the call's n_heads. Grouped-query attention passes K with its
  // own (fewer) heads, so that one call rotates Q and K with one cos/sin row per token.
  std::int64_t heads = 0;
};

// Cos/sin rows for positions [first, first + count), built once and reused across layers.
// The cache holds its own copy of the plan (moved in from a temporary; a copy is a few vectors
// of pairs() values, nothing next to the count rows it computes), so that
// `RopeCache c(RopePlan(p), 0, n)` is as valid as a cache of a named plan: nothing dangles.
class RopeCache {
 public:
  RopeCache(RopePlan plan, std::int64_t first, std::int64_t count, Isa isa = selected_isa());
  const RopePlan& plan() const { return plan_; }
  std::int64_t first() const { return first_; }
  std::int64_t count() const { return count_; }
  // The row of a position as the rotation kernels read it: the cosines, then from the next
  // 64-byte boundary as many sines (negated for the inverse rotation), each times the attention
  // factor, in binary32; rotated_span() of each, indexed by each pair's first element, in the
  // interleaved layout (each value twice), pairs() in the half layout. 64-byte aligned.
  const float* row(std::int64_t position) const;

 private:
  RopePlan plan_;
  std::int64_t first_, count_;
  std::vector<float, detail::LineAligned<float>> rows_;  // count rows as row() gives them
};

// Rotate q (and k, when k.in is set) for n_tokens tokens of n_heads heads (a tensor's own
// RopeTensor::heads, when set, replaces n_heads for it). positions holds
// n_tokens x position_axes() values. Fused: angles and sin/cos computed inside the call. Each
// thread that computes rows keeps those of its last call, if it has at most 512 tokens at
// head_dim 128, or if it streams its outputs (Options::stores), repeats the thread's last such
// call (plan, first position, token count) and its rows take at most 2 MiB (4096 tokens at
// head_dim 128, half layout), else of its last block of 16 tokens (per part, up to 4 parts), and
// the next call with the same plan reuses them where the positions are the same (the layers of
// one forward pass). A call of at most 16 tokens rotated on the calling thread is kept too,
// checked, and the next with the same arguments but positions checks only those. The results
// are the same bits either way, as they are whatever the order in which tokens and heads are
// rotated (Q's before K's, or on some CPUs several parts of a thread's tokens at once).
void rope_apply(const RopePlan& plan, DType dtype, std::int64_t n_tokens, std::int64_t n_heads,
                const std::int64_t* positions, const RopeTensor& q, const RopeTensor& k, const Options& options = {});
// The same through a cache (single position axis; every position must lie in the cache).
void rope_apply(const RopeCache& cache, DType dtype, std::int64_t n_tokens, std::int64_t n_heads,
                const std::int64_t* positions, const RopeTensor& q, const RopeTensor& k, const Options& options = {});

// The functions below take their outputs as spans and check, before anything is written, that
// each holds exactly what the call writes (positions.size() rows of its width): a pointer alone
// would let a short buffer be overrun silently. Every position is validated before the first
// write too, so a refused call leaves its output as it was (no half-written table).

// Sinusoidal: rows PE(positions[t]) in binary32, [n][d_model] (out: n * d_model floats); and
// x * sqrt(d_model) + PE in place (x: n * d_model floats).
void sinusoidal_table(const SinusoidalParams& p, std::span<const std::int64_t> positions, std::span<float> out,
                      Isa isa = selected_isa());
void sinusoidal_embed(const SinusoidalParams& p, std::span<const std::int64_t> positions, std::span<float> x,
                      Isa isa = selected_isa());

// ALiBi scores [n_heads][n_query][n_key], keys contiguous, strides in elements, for query
// positions first_query.. and key positions first_key..: a struct (like RopeTensor) because six
// integers in a row are easy to pass in the wrong order. `scores` must span the view's extent
// ((n_heads - 1) head_stride + (n_query - 1) query_stride + n_key floats); strides and overlap are
// checked as for RoPE's tensors (posenc/strided_view.hpp).
struct AlibiScores {
  std::span<float> scores;
  std::int64_t n_query = 0, n_key = 0;
  std::int64_t head_stride = 0, query_stride = 0;
  std::int64_t first_query = 0, first_key = 0;
};

// ALiBi: slopes in binary32; and the bias added to the scores; causal mode sets scores of keys
// after their query to -infinity (the causal mask).
std::vector<float> alibi_slopes(const AlibiParams& p);
void alibi_add_bias(const AlibiParams& p, const AlibiScores& s);

// Learned: rows of a [max_positions][dim] binary32 table (table: exactly max_positions * dim
// floats) into out (positions.size() * dim floats); a position outside the table is an error.
void learned_lookup(const LearnedParams& p, std::span<const float> table, std::span<const std::int64_t> positions,
                    std::span<float> out);

}  // namespace posenc::fast
