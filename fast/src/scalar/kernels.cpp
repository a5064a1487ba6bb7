// The portable path: plain C++ and SLEEF's deterministic scalar sincos. On a CPU with FMA it
// calls the FMA build (finz), which returns the same bits as the AVX2 and AVX-512 versions; on
// one without, the non-FMA build (cinz), whose last bit may differ in rare entries.
#include <sleef.h>

#include "../generic/angle_sum.hpp"
#include "../elements.hpp"
#include "../frequencies.hpp"
#include "../kernels.hpp"

// sleef.h declares the FMA build only when the including file is compiled with FMA enabled;
// this file must not be (it is the fallback), and calls it only after CPUID says FMA is there.
extern "C" Sleef_double_2 Sleef_finz_sincosd1_u35purecfma(double);

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

}  // namespace

const Kernels& scalar_kernels() {
  static const Kernels k{sincos, rotate, angle_sum<double>, angle_sum<float>};
  return k;
}

}  // namespace posenc::fast::detail
