// AVX-512 path (F, BW, VL): 16 binary32 lanes, 8 binary64 lanes for sincos. Compiled with
// -mavx512f -mavx512bw -mavx512vl -mfma -mf16c; only called when CPUID and XCR0 say so.
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

// Attention's 16 lanes (generic/attend.hpp): one vector.
struct Lanes {
  using R = __m512;
  // 16 dot products at once take 16 of the 32 registers, with 4 rows of K and a query vector
  // besides; P V holds 16 accumulators likewise.
  static constexpr int kDots = 16;
  static constexpr int kPvAccumulators = 16;

  static R zero() { return _mm512_setzero_ps(); }
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R hold(R v) { return in_register(v); }
  static R loadf(const float* p) { return _mm512_loadu_ps(p); }
  static void storef(float* p, R v) { _mm512_storeu_ps(p, v); }
  template <DType D>
  static R load(const void* p, std::int64_t i) {
    return Vec::load<D>(p, i);
  }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R div(R a, R b) { return _mm512_div_ps(a, b); }
  static R fmadd(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R below(R v, int n, float x) {
    const auto keep = static_cast<__mmask16>((1u << n) - 1);
    return _mm512_mask_blend_ps(keep, _mm512_set1_ps(x), v);
  }
  static R exp(R v) { return Sleef_finz_expf16_u10avx512f(v); }
  static float exp1(float x) { return Sleef_finz_expf1_u10purecfma(x); }
  static float log1(float x) { return Sleef_finz_logf1_u10purecfma(x); }

  // The tree (generic/attend.hpp): lanes l and l + 8, then l and l + 4 (128-bit blocks), then
  // l and l + 2, l and l + 1 (within a block).
  static float hsum(R v) {
    const R a = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xEE));
    const R b = _mm512_add_ps(a, _mm512_shuffle_f32x4(a, a, 0x01));
    const R c = _mm512_add_ps(b, _mm512_permute_ps(b, 0x0E));
    return _mm512_cvtss_f32(_mm512_add_ps(c, _mm512_permute_ps(c, 0x01)));
  }
  static float hmax(R v) {
    const R a = _mm512_max_ps(v, _mm512_shuffle_f32x4(v, v, 0xEE));
    const R b = _mm512_max_ps(a, _mm512_shuffle_f32x4(a, a, 0x01));
    const R c = _mm512_max_ps(b, _mm512_permute_ps(b, 0x0E));
    return _mm512_cvtss_f32(_mm512_max_ps(c, _mm512_permute_ps(c, 0x01)));
  }

  // 16 trees at once, each level adding the halves of two vectors' partial sums: 15 adds and 30
  // shuffles for 16 dot products (a tree per vector would take 4 adds and 4 shuffles each). Input
  // slot s takes acc[4 (s mod 4) + s / 4], so that lane i of the result is acc[i]'s sum.
  static R reduce16(const R* acc) {
    R w[8], z[4], r[2];
    const auto slot = [&](int s) { return acc[4 * (s % 4) + s / 4]; };
    for (int i = 0; i < 8; ++i) {
      const R a = slot(2 * i), b = slot(2 * i + 1);
      w[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    }
    for (int j = 0; j < 4; ++j) {
      z[j] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0x88),
                           _mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0xDD));
    }
    for (int i = 0; i < 2; ++i) {
      r[i] = _mm512_add_ps(_mm512_shuffle_ps(z[2 * i], z[2 * i + 1], 0x44), _mm512_shuffle_ps(z[2 * i], z[2 * i + 1], 0xEE));
    }
    return _mm512_add_ps(_mm512_shuffle_ps(r[0], r[1], 0x88), _mm512_shuffle_ps(r[0], r[1], 0xDD));
  }

  // groups[g], lane h KC + j, is head h's key g KC + j (KC = 16 / HC): a transpose of HC-lane
  // blocks (128-bit blocks for 4 heads, 256-bit halves for 2).
  template <int HC>
  static void by_head(const R* groups, R* out) {
    if constexpr (HC == 1) {
      out[0] = groups[0];
    } else if constexpr (HC == 2) {
      out[0] = _mm512_shuffle_f32x4(groups[0], groups[1], 0x44);
      out[1] = _mm512_shuffle_f32x4(groups[0], groups[1], 0xEE);
    } else {
      static_assert(HC == 4);
      const R t0 = _mm512_shuffle_f32x4(groups[0], groups[1], 0x44), t1 = _mm512_shuffle_f32x4(groups[2], groups[3], 0x44);
      const R t2 = _mm512_shuffle_f32x4(groups[0], groups[1], 0xEE), t3 = _mm512_shuffle_f32x4(groups[2], groups[3], 0xEE);
      out[0] = _mm512_shuffle_f32x4(t0, t1, 0x88);
      out[1] = _mm512_shuffle_f32x4(t0, t1, 0xDD);
      out[2] = _mm512_shuffle_f32x4(t2, t3, 0x88);
      out[3] = _mm512_shuffle_f32x4(t2, t3, 0xDD);
    }
  }

  // The tree of each of HC <= 4 vectors by one network (lane 4h: vector h's), where one tree each
  // would take 4 times the shuffles: 8 blocks of two vectors, then 4-lane blocks of four, then
  // within each 128-bit block.
  template <class Op>
  static R trees4(const R* v, Op op) {
    const R w0 = op(_mm512_shuffle_f32x4(v[0], v[1], 0x44), _mm512_shuffle_f32x4(v[0], v[1], 0xEE));
    const R w1 = op(_mm512_shuffle_f32x4(v[2], v[3], 0x44), _mm512_shuffle_f32x4(v[2], v[3], 0xEE));
    const R z = op(_mm512_shuffle_f32x4(w0, w1, 0x88), _mm512_shuffle_f32x4(w0, w1, 0xDD));
    const R c = op(z, _mm512_permute_ps(z, 0x4E));
    return op(c, _mm512_permute_ps(c, 0xB1));
  }
  template <int HC, class Op>
  static void heads(const R* v, float* out, Op op) {
    R four[4];
    for (int h = 0; h < 4; ++h) four[h] = v[h < HC ? h : 0];
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, trees4(four, op));
    for (int h = 0; h < HC; ++h) out[h] = lanes[4 * h];
  }
  template <int HC>
  static void hsum_heads(const R* v, float* out) {
    heads<HC>(v, out, [](R a, R b) { return _mm512_add_ps(a, b); });
  }
  template <int HC>
  static void hmax_heads(const R* v, float* out) {
    heads<HC>(v, out, [](R a, R b) { return _mm512_max_ps(a, b); });
  }
};

}  // namespace

const Kernels& avx512_kernels() {
  static const Kernels k{sincos, rotate<Vec>, angle_sum<double>, angle_sum<float>, attend<Lanes>, attend_merge<Lanes>};
  return k;
}

}  // namespace posenc::fast::detail
