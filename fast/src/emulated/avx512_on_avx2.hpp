#pragma once
// The AVX-512 path's intrinsics onto AVX2, for a test build that runs avx512/kernels.cpp on a
// machine without AVX-512 (the CPUs this project is developed on lack it). SIMDe (libsimde-dev)
// emulates most of them; the eight it does not (0.7.4) are written here from Intel's definitions,
// on halves with the AVX2/FMA/F16C instruction of the same rounding where one exists. The list is
// exactly the intrinsics the path uses: one added to the kernels without a line here is a
// compile error in this build (GCC refuses to inline an AVX-512 intrinsic into AVX2 code).
// What this checks: lane order, masks, rounding and store logic. What it cannot: the AVX-512
// instructions themselves and the compiler's code for them.
#include <immintrin.h>
#include <sleef.h>
#include <simde/x86/avx512.h>

#include <cstdint>
#include <cstring>

namespace posenc::emulated {

// 16 lanes of T out of, and into, a 64-byte SIMDe vector.
template <class T, class V>
inline void lanes(const V& v, T* out) {
  static_assert(sizeof(V) == 64);
  std::memcpy(out, &v, 64);
}
template <class V, class T>
inline V vector(const T* in) {
  V v;
  std::memcpy(&v, in, 64);
  return v;
}

inline simde__m512i cvtepu16_epi32(__m256i h) {
  std::uint16_t in[16];
  std::uint32_t out[16];
  std::memcpy(in, &h, 32);
  for (int i = 0; i < 16; ++i) out[i] = in[i];
  return vector<simde__m512i>(out);
}

inline __m256i cvtepi32_epi16(simde__m512i v) {  // truncation, as vpmovdw
  std::uint32_t in[16];
  std::uint16_t out[16];
  lanes(v, in);
  for (int i = 0; i < 16; ++i) out[i] = static_cast<std::uint16_t>(in[i]);
  __m256i r;
  std::memcpy(&r, out, 32);
  return r;
}

inline simde__m512 fmaddsub_ps(simde__m512 a, simde__m512 b, simde__m512 c) {  // on halves, fused
  __m256 x[2], y[2], z[2], r[2];
  std::memcpy(x, &a, 64);
  std::memcpy(y, &b, 64);
  std::memcpy(z, &c, 64);
  for (int h = 0; h < 2; ++h) r[h] = _mm256_fmaddsub_ps(x[h], y[h], z[h]);
  return vector<simde__m512>(reinterpret_cast<const float*>(r));
}

inline simde__m512 permute_ps(simde__m512 v, int imm) {  // within each 128-bit lane
  float in[16], out[16];
  lanes(v, in);
  for (int i = 0; i < 16; ++i) out[i] = in[(i & ~3) + ((imm >> (2 * (i & 3))) & 3)];
  return vector<simde__m512>(out);
}

inline simde__m512 cvtph_ps(__m256i h) {
  const __m256 r[2] = {_mm256_cvtph_ps(_mm256_castsi256_si128(h)), _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1))};
  return vector<simde__m512>(reinterpret_cast<const float*>(r));
}

template <int Rounding>
inline __m256i cvtps_ph(simde__m512 v) {
  __m256 x[2];
  std::memcpy(x, &v, 64);
  return _mm256_set_m128i(_mm256_cvtps_ph(x[1], Rounding), _mm256_cvtps_ph(x[0], Rounding));
}

inline void stream_si512(void* p, simde__m512i v) {  // p 64-byte aligned, as vmovntdq requires
  __m256i h[2];
  std::memcpy(h, &v, 64);
  _mm256_stream_si256(static_cast<__m256i*>(p), h[0]);
  _mm256_stream_si256(static_cast<__m256i*>(p) + 1, h[1]);
}

// SLEEF's 8-lane kernel as two 4-lane AVX2 calls: the finz kernels give the same bits on every
// path (SLEEF's deterministic variants), which is what lets the halves stand in for the whole.
struct Sleef_m512d_2 {
  simde__m512d x, y;
};
inline Sleef_m512d_2 sincosd8_u35(simde__m512d a) {
  __m256d in[2], s[2], c[2];
  std::memcpy(in, &a, 64);
  for (int h = 0; h < 2; ++h) {
    const Sleef___m256d_2 r = Sleef_finz_sincosd4_u35avx2(in[h]);
    s[h] = r.x;
    c[h] = r.y;
  }
  return {vector<simde__m512d>(reinterpret_cast<const double*>(s)), vector<simde__m512d>(reinterpret_cast<const double*>(c))};
}

inline float cvtss_f32(simde__m512 v) {  // lane 0
  float out[16];
  lanes(v, out);
  return out[0];
}

inline simde__m512 expf16_u10(simde__m512 a) {  // on halves, as sincosd8_u35
  __m256 in[2], r[2];
  std::memcpy(in, &a, 64);
  for (int h = 0; h < 2; ++h) r[h] = Sleef_finz_expf8_u10avx2(in[h]);
  return vector<simde__m512>(reinterpret_cast<const float*>(r));
}

}  // namespace posenc::emulated

#define __m512 simde__m512
#define __m512i simde__m512i
#define __m512d simde__m512d
#define Sleef___m512d_2 posenc::emulated::Sleef_m512d_2
#define Sleef_finz_sincosd8_u35avx512f posenc::emulated::sincosd8_u35
#define Sleef_finz_expf16_u10avx512f posenc::emulated::expf16_u10

// SIMDe's emulations. (#undef first: without optimization GCC defines some as macros.)
#undef _mm512_loadu_pd
#define _mm512_loadu_pd simde_mm512_loadu_pd
#undef _mm512_storeu_pd
#define _mm512_storeu_pd simde_mm512_storeu_pd
#undef _mm512_mul_pd
#define _mm512_mul_pd simde_mm512_mul_pd
#undef _mm512_add_pd
#define _mm512_add_pd simde_mm512_add_pd
#undef _mm512_fmsub_pd
#define _mm512_fmsub_pd simde_mm512_fmsub_pd
#undef _mm512_fmadd_pd
#define _mm512_fmadd_pd simde_mm512_fmadd_pd
#undef _mm512_fnmadd_pd
#define _mm512_fnmadd_pd simde_mm512_fnmadd_pd
#undef _mm512_loadu_ps
#define _mm512_loadu_ps simde_mm512_loadu_ps
#undef _mm512_storeu_ps
#define _mm512_storeu_ps simde_mm512_storeu_ps
#undef _mm512_mul_ps
#define _mm512_mul_ps simde_mm512_mul_ps
#undef _mm512_fmadd_ps
#define _mm512_fmadd_ps simde_mm512_fmadd_ps
#undef _mm512_fmsub_ps
#define _mm512_fmsub_ps simde_mm512_fmsub_ps
#undef _mm512_castsi512_ps
#define _mm512_castsi512_ps simde_mm512_castsi512_ps
#undef _mm512_castps_si512
#define _mm512_castps_si512 simde_mm512_castps_si512
#undef _mm512_slli_epi32
#define _mm512_slli_epi32 simde_mm512_slli_epi32
#undef _mm512_srli_epi32
#define _mm512_srli_epi32 simde_mm512_srli_epi32
#undef _mm512_and_si512
#define _mm512_and_si512 simde_mm512_and_si512
#undef _mm512_add_epi32
#define _mm512_add_epi32 simde_mm512_add_epi32
#undef _mm512_mask_add_epi32
#define _mm512_mask_add_epi32 simde_mm512_mask_add_epi32
#undef _mm512_test_epi32_mask
#define _mm512_test_epi32_mask simde_mm512_test_epi32_mask
#undef _mm512_set1_epi32
#define _mm512_set1_epi32 simde_mm512_set1_epi32
#undef _mm512_loadu_si512
#define _mm512_loadu_si512 simde_mm512_loadu_si512
#undef _mm512_storeu_si512
#define _mm512_storeu_si512 simde_mm512_storeu_si512
#undef _mm512_mask_blend_epi16
#define _mm512_mask_blend_epi16 simde_mm512_mask_blend_epi16
#undef _mm512_permutex2var_ps
#define _mm512_permutex2var_ps simde_mm512_permutex2var_ps
#undef _mm512_setr_epi32
#define _mm512_setr_epi32 simde_mm512_setr_epi32
#undef _mm512_extracti32x4_epi32
#define _mm512_extracti32x4_epi32 simde_mm512_extracti32x4_epi32
#undef _mm512_setzero_ps
#define _mm512_setzero_ps simde_mm512_setzero_ps
#undef _mm512_store_ps
#define _mm512_store_ps simde_mm512_store_ps
#undef _mm512_set1_ps
#define _mm512_set1_ps simde_mm512_set1_ps
#undef _mm512_add_ps
#define _mm512_add_ps simde_mm512_add_ps
#undef _mm512_sub_ps
#define _mm512_sub_ps simde_mm512_sub_ps
#undef _mm512_div_ps
#define _mm512_div_ps simde_mm512_div_ps
#undef _mm512_max_ps
#define _mm512_max_ps simde_mm512_max_ps
#undef _mm512_mask_blend_ps
#define _mm512_mask_blend_ps simde_mm512_mask_blend_ps
#undef _mm512_shuffle_f32x4
#define _mm512_shuffle_f32x4 simde_mm512_shuffle_f32x4
#undef _mm512_shuffle_ps
#define _mm512_shuffle_ps simde_mm512_shuffle_ps
// Ours.
#undef _mm512_cvtss_f32
#define _mm512_cvtss_f32 posenc::emulated::cvtss_f32
#undef _mm512_cvtepu16_epi32
#define _mm512_cvtepu16_epi32 posenc::emulated::cvtepu16_epi32
#undef _mm512_cvtepi32_epi16
#define _mm512_cvtepi32_epi16 posenc::emulated::cvtepi32_epi16
#undef _mm512_fmaddsub_ps
#define _mm512_fmaddsub_ps posenc::emulated::fmaddsub_ps
#undef _mm512_permute_ps
#define _mm512_permute_ps posenc::emulated::permute_ps
#undef _mm512_cvtph_ps
#define _mm512_cvtph_ps posenc::emulated::cvtph_ps
#undef _mm512_cvtps_ph
#define _mm512_cvtps_ph(v, rounding) posenc::emulated::cvtps_ph<(rounding)>(v)
#undef _mm512_stream_si512
#define _mm512_stream_si512 posenc::emulated::stream_si512
