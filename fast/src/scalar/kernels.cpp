// The portable path: plain C++ and SLEEF's deterministic scalar sincos. On a CPU with FMA it
// calls the FMA build (finz), which returns the same bits as the AVX2 and AVX-512 versions; on
// one without, the non-FMA build (cinz), whose last bit may differ in rare entries.
#include <sleef.h>

#include "../generic/angle_sum.hpp"
#include "../generic/attend.hpp"
#include "../elements.hpp"
#include "../frequencies.hpp"
#include "../kernels.hpp"

// sleef.h declares the FMA build only when the including file is compiled with FMA enabled;
// this file must not be (it is the fallback), and calls it only after CPUID says FMA is there.
extern "C" Sleef_double_2 Sleef_finz_sincosd1_u35purecfma(double);
extern "C" float Sleef_finz_expf1_u10purecfma(float);
extern "C" float Sleef_finz_logf1_u10purecfma(float);

namespace posenc::fast::detail {
namespace {

void sincos(const double* position, const double* w_hi, const double* w_lo, double* s, double* c, std::size_t n) {
  static const bool fma = __builtin_cpu_supports("fma");
  for (std::size_t i = 0; i < n; ++i) {
    double hi = 0, lo = 0;
    angle(position[i], {w_hi[i], w_lo[i]}, hi, lo);
    const Sleef_double_2 r = fma ? Sleef_finz_sincosd1_u35purecfma(hi) : Sleef_cinz_sincosd1_u35purec(hi);
    // sin(h + l) = sin h + l cos h + O(l^2), |l| <= 2^-20 on the fast path's domain.
    s[i] = std::fma(r.y, lo, r.x);
    c[i] = std::fma(-r.x, lo, r.y);
  }
}

void rotate(const TokenRun& run) {
  for_each_token(run, [](const TokenRows& r) {
    for_each_head(r, [&](const void* x, void* y) { rotate_pairs(r.dtype, r.interleaved, r.span, 0, r.c, r.s, x, y); });
  });
}

// Attention's 16 lanes (generic/attend.hpp) as an array, each operation a loop: the definition
// the vector paths' lanes reproduce bit for bit.
struct Lanes {
  struct R {
    float v[16];
  };
  static constexpr int kDots = 16;
  static constexpr int kPvAccumulators = 16;

  template <class F>
  static R each(F f) {
    R r;
    for (int l = 0; l < 16; ++l) r.v[l] = f(l);
    return r;
  }
  static R zero() { return set1(0.0f); }
  static R set1(float x) {
    return each([&](int) { return x; });
  }
  static R hold(R v) { return v; }
  static R loadf(const float* p) {
    return each([&](int l) { return p[l]; });
  }
  static void storef(float* p, const R& v) { std::memcpy(p, v.v, sizeof v.v); }
  template <DType D>
  static R load(const void* p, std::int64_t i) {
    return each([&](int l) { return detail::load(D, p, i + l); });
  }
  static R add(const R& a, const R& b) {
    return each([&](int l) { return a.v[l] + b.v[l]; });
  }
  static R sub(const R& a, const R& b) {
    return each([&](int l) { return a.v[l] - b.v[l]; });
  }
  static R mul(const R& a, const R& b) {
    return each([&](int l) { return a.v[l] * b.v[l]; });
  }
  static R div(const R& a, const R& b) {
    return each([&](int l) { return a.v[l] / b.v[l]; });
  }
  static R fmadd(const R& a, const R& b, const R& c) {
    return each([&](int l) { return std::fma(a.v[l], b.v[l], c.v[l]); });
  }
  static R below(const R& v, int n, float x) {
    return each([&](int l) { return l < n ? v.v[l] : x; });
  }
  static float exp1(float x) {
    static const bool fma = __builtin_cpu_supports("fma");
    return fma ? Sleef_finz_expf1_u10purecfma(x) : Sleef_cinz_expf1_u10purec(x);
  }
  static float log1(float x) {
    static const bool fma = __builtin_cpu_supports("fma");
    return fma ? Sleef_finz_logf1_u10purecfma(x) : Sleef_cinz_logf1_u10purec(x);
  }
  static R exp(const R& v) {
    return each([&](int l) { return exp1(v.v[l]); });
  }
  static float hsum(const R& v) { return tree_sum(v.v); }
  static float hmax(const R& v) { return tree_max(v.v); }
  static R reduce16(const R* acc) {
    return each([&](int i) { return tree_sum(acc[i].v); });
  }
  // groups[g], lane h KC + j, is head h's key g KC + j (KC = 16 / HC).
  template <int HC>
  static void by_head(const R* groups, R* out) {
    constexpr int kc = 16 / HC;
    for (int h = 0; h < HC; ++h) out[h] = each([&](int k) { return groups[k / kc].v[h * kc + k % kc]; });
  }
};

}  // namespace

const Kernels& scalar_kernels() {
  static const Kernels k{sincos, rotate, angle_sum<double>, angle_sum<float>, attend<Lanes>, attend_merge<Lanes>};
  return k;
}

}  // namespace posenc::fast::detail
