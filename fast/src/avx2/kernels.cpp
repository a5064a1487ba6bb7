// AVX2 + FMA (+ F16C) path: 8 binary32 lanes, 4 binary64 lanes for sincos. Compiled with
// -mavx2 -mfma -mf16c; only called when CPUID says so.
#include <immintrin.h>
#include <sleef.h>

#include "../generic/rotate.hpp"
#include "../kernels.hpp"

namespace posenc::fast::detail {
namespace {

void sincos(const double* hi, const double* lo, double* s, double* c, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d h = _mm256_loadu_pd(hi + i), l = _mm256_loadu_pd(lo + i);
    const Sleef___m256d_2 r = Sleef_finz_sincosd4_u10avx2(h);
    _mm256_storeu_pd(s + i, _mm256_fmadd_pd(r.y, l, r.x));
    _mm256_storeu_pd(c + i, _mm256_fnmadd_pd(r.x, l, r.y));
  }
  scalar_kernels().sincos(hi + i, lo + i, s + i, c + i, n - i);
}

struct Vec {
  static constexpr std::int64_t kWidth = 8;

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

  template <DType D>
  static void store(void* p, std::int64_t i, __m256 v) {
    if constexpr (D == DType::f32) {
      _mm256_storeu_ps(static_cast<float*>(p) + i, v);
    } else {
      auto* out = reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(p) + i);
      if constexpr (D == DType::bf16) {
        // Round to nearest even on the bit pattern; NaN keeps its top bits, made quiet.
        const __m256i b = _mm256_castps_si256(v);
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
        const __m256i rounded = _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
        const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffffff)),
                                               _mm256_set1_epi32(0x7f800000));
        const __m256i quiet = _mm256_or_si256(b, _mm256_set1_epi32(0x400000));
        const __m256i top = _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, nan), 16);
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(top, top), 0x08);
        _mm_storeu_si128(out, _mm256_castsi256_si128(packed));
      } else {
        _mm_storeu_si128(out, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
    }
  }

  static __m256 loadf(const float* p) { return _mm256_loadu_ps(p); }
  static __m256 fmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  static __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
  static __m256 swap_pairs(__m256 v) { return _mm256_permute_ps(v, 0xB1); }
};

}  // namespace

const Kernels& avx2_kernels() {
  static const Kernels k{sincos, rotate<Vec>};
  return k;
}

}  // namespace posenc::fast::detail
