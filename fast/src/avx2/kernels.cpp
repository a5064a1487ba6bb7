// AVX2 + FMA (+ F16C) path: 8 binary32 lanes, 4 binary64 lanes for sincos. Compiled with
// -mavx2 -mfma -mf16c; only called when CPUID says so.
#include <immintrin.h>
#include <sleef.h>

#include "../generic/angle_sum.hpp"
#include "../generic/attend.hpp"
#include "../generic/rotate.hpp"
#include "../kernels.hpp"

namespace posenc::fast::detail {
namespace {

void sincos(const double* position, const double* w_hi, const double* w_lo, double* s, double* c, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    // frequencies.hpp, angle: hi = p w_hi; lo = fma(p, w_hi, -hi) + p w_lo.
    const __m256d p = _mm256_loadu_pd(position + i), wh = _mm256_loadu_pd(w_hi + i);
    const __m256d h = _mm256_mul_pd(p, wh);
    const __m256d l = _mm256_add_pd(_mm256_fmsub_pd(p, wh, h), _mm256_mul_pd(p, _mm256_loadu_pd(w_lo + i)));
    const Sleef___m256d_2 r = Sleef_finz_sincosd4_u35avx2(h);
    _mm256_storeu_pd(s + i, _mm256_fmadd_pd(r.y, l, r.x));
    _mm256_storeu_pd(c + i, _mm256_fnmadd_pd(r.x, l, r.y));
  }
  scalar_kernels().sincos(position + i, w_hi + i, w_lo + i, s + i, c + i, n - i);
}

struct Vec {
  static constexpr std::int64_t kWidth = 8;
  // Of 16 vector registers, those a row may hold across heads (generic/rotate.hpp,
  // fits_in_registers): up to 4 vectors per array (head_dim 64 in the half layout, 32
  // interleaved), or the cosines alone up to 8 (head_dim 128 in the half layout).
  static constexpr std::int64_t kRowRegisters = 8;

  template <DType D>
  static __m256 load(const void* p, std::int64_t i) {
    if constexpr (D == DType::f32) {
      return _mm256_loadu_ps(static_cast<const float*>(p) + i);
    } else {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(p) + i));
      if constexpr (D == DType::bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
      return _mm256_cvtph_ps(h);
    }
  }

  template <DType D, bool Stream>
  static void store(void* p, std::int64_t i, __m256 v) {
    if constexpr (D == DType::f32) {
      store256<Stream>(static_cast<float*>(p) + i, _mm256_castps_si256(v));
    } else if constexpr (D == DType::bf16) {
      const __m256i low = _mm256_srli_epi32(bf16_rounded(v), 16);
      store128<Stream>(static_cast<std::uint16_t*>(p) + i,
                       _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(low, low), 0x08)));
    } else {
      store128<Stream>(static_cast<std::uint16_t*>(p) + i, _mm256_cvtps_ph(v, kNearest));
    }
  }

  // f16: v0 and v1 packed into one 32-byte store (bf16 pairs of vectors go by store_split).
  template <DType D, bool Stream>
    requires(D == DType::f16)
  static void store2(void* p, std::int64_t i, __m256 v0, __m256 v1) {
    store256<Stream>(static_cast<std::uint16_t*>(p) + i,
                     _mm256_set_m128i(_mm256_cvtps_ph(v1, kNearest), _mm256_cvtps_ph(v0, kNearest)));
  }

  static constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

  // Each lane rounded to nearest even at bit 16, the bf16 bits in its top half (NaN: see
  // generic/rotate.hpp).
  static __m256i bf16_rounded(__m256 v) {
    const __m256i b = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
  }

  static void load_split(const void* p, std::int64_t i, __m256& even, __m256& odd) {
    const __m256i w =
        in_register(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const std::uint16_t*>(p) + i)));
    even = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    odd = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
  }

  template <bool Stream>
  static void store_split(void* p, std::int64_t i, __m256 even, __m256 odd) {
    const __m256i w = _mm256_blend_epi16(_mm256_srli_epi32(bf16_rounded(even), 16), bf16_rounded(odd), 0xAA);
    store256<Stream>(static_cast<std::uint16_t*>(p) + i, w);
  }

  static void split_floats(const float* p, __m256& even, __m256& odd) {
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    // shuffle_ps works per 128-bit lane: (a0 a2 b0 b2 | a4 a6 b4 b6), then the 64-bit quarters in order.
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
  }

  // Non-temporal: one 32-byte store where aligned, else two 16-byte ones (rows need 16 only).
  template <bool Stream>
  static void store256(void* p, __m256i v) {
    if constexpr (Stream) {
      if (reinterpret_cast<std::uintptr_t>(p) % 32 == 0) {
        _mm256_stream_si256(static_cast<__m256i*>(p), v);
      } else {
        _mm_stream_si128(static_cast<__m128i*>(p), _mm256_castsi256_si128(v));
        _mm_stream_si128(static_cast<__m128i*>(p) + 1, _mm256_extracti128_si256(v, 1));
      }
    } else {
      _mm256_storeu_si256(static_cast<__m256i*>(p), v);
    }
  }

  template <bool Stream>
  static void store128(void* p, __m128i v) {
    if constexpr (Stream) {
      _mm_stream_si128(static_cast<__m128i*>(p), v);
    } else {
      _mm_storeu_si128(static_cast<__m128i*>(p), v);
    }
  }

  static __m256 loadf(const float* p) { return _mm256_loadu_ps(p); }
  static void storef(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
  static __m256 fmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  static __m256 fmsub(__m256 a, __m256 b, __m256 c) { return _mm256_fmsub_ps(a, b, c); }
  static __m256 fmaddsub(__m256 a, __m256 b, __m256 c) { return _mm256_fmaddsub_ps(a, b, c); }
  static __m256 swap_pairs(__m256 v) { return _mm256_permute_ps(v, 0xB1); }
};

// Attention's 16 lanes (generic/attend.hpp): two vectors, lanes 0-7 and 8-15.
struct Lanes {
  struct R {
    __m256 lo, hi;
  };
  // Of 16 registers, 4 dot products' accumulators take 8, with a row of K and a query vector
  // besides; P V holds 4 accumulators likewise.
  static constexpr int kDots = 4;
  static constexpr int kPvAccumulators = 4;

  template <class F>
  static R each(F f, const R& a) {
    return {f(a.lo), f(a.hi)};
  }
  static R zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static R set1(float x) { return {_mm256_set1_ps(x), _mm256_set1_ps(x)}; }
  static R hold(R v) { return {in_register(v.lo), in_register(v.hi)}; }
  static R loadf(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void storef(float* p, const R& v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  template <DType D>
  static R load(const void* p, std::int64_t i) {
    return {Vec::load<D>(p, i), Vec::load<D>(p, i + 8)};
  }
  static R add(const R& a, const R& b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static R sub(const R& a, const R& b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
  static R mul(const R& a, const R& b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static R div(const R& a, const R& b) { return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)}; }
  static R fmadd(const R& a, const R& b, const R& c) {
    return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
  }
  static R below(const R& v, int n, float x) {
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 fill = _mm256_set1_ps(x);
    const auto half = [&](__m256 h, int first) {
      const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - first), index);
      return _mm256_blendv_ps(fill, h, _mm256_castsi256_ps(keep));
    };
    return {half(v.lo, 0), half(v.hi, 8)};
  }
  static R exp(const R& v) { return {Sleef_finz_expf8_u10avx2(v.lo), Sleef_finz_expf8_u10avx2(v.hi)}; }
  static float exp1(float x) { return Sleef_finz_expf1_u10purecfma(x); }
  static float log1(float x) { return Sleef_finz_logf1_u10purecfma(x); }

  // The tree (generic/attend.hpp): lanes l and l + 8 (the two vectors), then l and l + 4 (the
  // 128-bit halves), then l and l + 2, l and l + 1.
  template <class Op>
  static float tree(const R& v, Op op) {
    const __m256 a = op(v.lo, v.hi);
    const __m128 b = op(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 c = op(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(op(c, _mm_shuffle_ps(c, c, 0x01)));
  }
  static float hsum(const R& v) {
    return tree(v, [](auto a, auto b) {
      if constexpr (sizeof(a) == 32) {
        return _mm256_add_ps(a, b);
      } else {
        return _mm_add_ps(a, b);
      }
    });
  }
  static float hmax(const R& v) {
    return tree(v, [](auto a, auto b) {
      if constexpr (sizeof(a) == 32) {
        return _mm256_max_ps(a, b);
      } else {
        return _mm_max_ps(a, b);
      }
    });
  }

  // 4 trees at once: the halves' sums, then l + 4 across two vectors' 128-bit halves, then the
  // pairs within each half; lanes 0, 4, 1, 5 of the result hold acc[0 .. 3]'s sums.
  template <int N>
  static void reduce(const R* acc, float* out) {
    static_assert(N == 4);
    __m256 a[4];
    for (int i = 0; i < 4; ++i) a[i] = _mm256_add_ps(acc[i].lo, acc[i].hi);
    const __m256 z0 = _mm256_add_ps(_mm256_permute2f128_ps(a[0], a[1], 0x20), _mm256_permute2f128_ps(a[0], a[1], 0x31));
    const __m256 z1 = _mm256_add_ps(_mm256_permute2f128_ps(a[2], a[3], 0x20), _mm256_permute2f128_ps(a[2], a[3], 0x31));
    const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(z0, z1, 0x44), _mm256_shuffle_ps(z0, z1, 0xEE));
    const __m256 f = _mm256_add_ps(_mm256_shuffle_ps(r, r, 0x88), _mm256_shuffle_ps(r, r, 0xDD));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, f);
    out[0] = lanes[0];
    out[1] = lanes[4];
    out[2] = lanes[1];
    out[3] = lanes[5];
  }
};

}  // namespace

const Kernels& avx2_kernels() {
  static const Kernels k{sincos, rotate<Vec>, angle_sum<double>, angle_sum<float>, attend<Lanes>, attend_merge<Lanes>};
  return k;
}

}  // namespace posenc::fast::detail
