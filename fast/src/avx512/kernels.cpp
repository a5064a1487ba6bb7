// AVX-512 path (F, BW, VL): 16 binary32 lanes, 8 binary64 lanes for sincos. Compiled with
// -mavx512f -mavx512bw -mavx512vl -mfma -mf16c; only called when CPUID and XCR0 say so.
#include <immintrin.h>
#include <sleef.h>

#include "../generic/angle_sum.hpp"
#include "../generic/rotate.hpp"
#include "../kernels.hpp"

namespace posenc::fast::detail {
namespace {

void sincos(const double* position, const double* w_hi, const double* w_lo, double* s, double* c, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    // frequencies.hpp, angle: hi = p w_hi; lo = fma(p, w_hi, -hi) + p w_lo.
    const __m512d p = _mm512_loadu_pd(position + i), wh = _mm512_loadu_pd(w_hi + i);
    const __m512d h = _mm512_mul_pd(p, wh);
    const __m512d l = _mm512_add_pd(_mm512_fmsub_pd(p, wh, h), _mm512_mul_pd(p, _mm512_loadu_pd(w_lo + i)));
    const Sleef___m512d_2 r = Sleef_finz_sincosd8_u35avx512f(h);
    _mm512_storeu_pd(s + i, _mm512_fmadd_pd(r.y, l, r.x));
    _mm512_storeu_pd(c + i, _mm512_fnmadd_pd(r.x, l, r.y));
  }
  scalar_kernels().sincos(position + i, w_hi + i, w_lo + i, s + i, c + i, n - i);
}

struct Vec {
  static constexpr std::int64_t kWidth = 16;
  // Of 32 vector registers, those a row may hold across heads (generic/rotate.hpp,
  // fits_in_registers): up to 8 vectors per array (head_dim 256 in the half layout, 128
  // interleaved), or the cosines alone up to 16.
  static constexpr std::int64_t kRowRegisters = 16;

  template <DType D>
  static __m512 load(const void* p, std::int64_t i) {
    if constexpr (D == DType::f32) {
      return _mm512_loadu_ps(static_cast<const float*>(p) + i);
    } else {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const std::uint16_t*>(p) + i));
      if constexpr (D == DType::bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
      return _mm512_cvtph_ps(h);
    }
  }

  template <DType D, bool Stream>
  static void store(void* p, std::int64_t i, __m512 v) {
    if constexpr (D == DType::f32) {
      store512<Stream>(static_cast<float*>(p) + i, _mm512_castps_si512(v));
    } else {
      auto* out = reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(p) + i);
      if constexpr (D == DType::bf16) {
        store256<Stream>(out, _mm512_cvtepi32_epi16(_mm512_srli_epi32(bf16_rounded(v), 16)));
      } else {
        store256<Stream>(out, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      }
    }
  }

  // Each lane rounded to nearest even at bit 16, the bf16 bits in its top half (NaN: see
  // generic/rotate.hpp): b + 0x7fff + (bit 16 of b), as b + 0x8000 where bit 16 is set (a mask
  // test) and b + 0x7fff elsewhere. On this path's cores a 512-bit shift issues on one port of
  // the two that take the other integer operations, and the shift-and-add form costs a shift, an
  // and and two adds per vector; this one a test and two adds (bf16, 16 tokens x 32 heads in L2:
  // 5.3-5.4 us per call against 6.0-6.4). Narrowing by AVX-512 BF16's vcvtne2ps2bf16, a word
  // permute and a test for subnormal lanes instead runs within 3% of the shift-and-add form: that
  // instruction takes two cycles of its port.
  static __m512i bf16_rounded(__m512 v) {
    const __m512i b = _mm512_castps_si512(v);
    const auto lsb_set = _mm512_test_epi32_mask(b, _mm512_set1_epi32(0x10000));
    return _mm512_mask_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7fff)), lsb_set, b, _mm512_set1_epi32(0x8000));
  }

  static void load_split(const void* p, std::int64_t i, __m512& even, __m512& odd) {
    const __m512i w = in_register(_mm512_loadu_si512(static_cast<const std::uint16_t*>(p) + i));
    even = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
    odd = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
  }

  template <bool Stream>
  static void store_split(void* p, std::int64_t i, __m512 even, __m512 odd) {
    const __m512i w = _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srli_epi32(bf16_rounded(even), 16), bf16_rounded(odd));
    store512<Stream>(static_cast<std::uint16_t*>(p) + i, w);
  }

  // Non-temporal: one 64-byte store where aligned (PyTorch's 64-byte tensors with rows a multiple
  // of 64 bytes apart), else four 16-byte ones (rows need 16 only). A line written in quarters
  // takes four store micro-ops and three extracts.
  template <bool Stream>
  static void store512(void* p, __m512i v) {
    if constexpr (Stream) {
      if (reinterpret_cast<std::uintptr_t>(p) % 64 == 0) {
        _mm512_stream_si512(static_cast<__m512i*>(p), v);
      } else {
        auto* q = static_cast<__m128i*>(p);
        _mm_stream_si128(q, _mm512_extracti32x4_epi32(v, 0));
        _mm_stream_si128(q + 1, _mm512_extracti32x4_epi32(v, 1));
        _mm_stream_si128(q + 2, _mm512_extracti32x4_epi32(v, 2));
        _mm_stream_si128(q + 3, _mm512_extracti32x4_epi32(v, 3));
      }
    } else {
      _mm512_storeu_si512(p, v);
    }
  }

  static void split_floats(const float* p, __m512& even, __m512& odd) {
    const __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 16);
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    even = _mm512_permutex2var_ps(a, evens, b);
    odd = _mm512_permutex2var_ps(a, _mm512_add_epi32(evens, _mm512_set1_epi32(1)), b);
  }

  template <bool Stream>
  static void store256(__m256i* p, __m256i v) {
    if constexpr (Stream) {
      auto* half = reinterpret_cast<__m128i*>(p);
      _mm_stream_si128(half, _mm256_castsi256_si128(v));
      _mm_stream_si128(half + 1, _mm256_extracti128_si256(v, 1));
    } else {
      _mm256_storeu_si256(p, v);
    }
  }

  static __m512 loadf(const float* p) { return _mm512_loadu_ps(p); }
  static void storef(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
  static __m512 fmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
  static __m512 fmsub(__m512 a, __m512 b, __m512 c) { return _mm512_fmsub_ps(a, b, c); }
  static __m512 fmaddsub(__m512 a, __m512 b, __m512 c) { return _mm512_fmaddsub_ps(a, b, c); }
  static __m512 swap_pairs(__m512 v) { return _mm512_permute_ps(v, 0xB1); }
};

}  // namespace

const Kernels& avx512_kernels() {
  static const Kernels k{sincos, rotate<Vec>, angle_sum<double>, angle_sum<float>};
  return k;
}

}  // namespace posenc::fast::detail
