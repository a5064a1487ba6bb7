#pragma once
// The per-ISA kernels behind the fast interface. Each path lives in its own folder and is
// compiled with its own target flags; the driver (rope.cpp, absolute.cpp) is shared.
#include <cstddef>
#include <cstdint>

#include "posenc/fast/fast.hpp"

namespace posenc::fast::detail {

struct Kernels {
  // s[i], c[i] = sin and cos of hi[i] + lo[i] (|lo| <= ulp(hi)), to about one binary64 ulp.
  // SLEEF's deterministic (finz) kernels: bit-identical results on every path.
  void (*sincos)(const double* hi, const double* lo, double* s, double* c, std::size_t n);
  // y[j] = x[j] * C[j] + x[partner(j)] * S[j] for j < span (binary32 FMA, product first), with
  // partner(j) = j ^ 1 (interleaved) or (j + span/2) mod span (half). x, y in `dtype` storage.
  void (*rotate)(DType dtype, bool interleaved, std::int64_t span, const float* C, const float* S, const void* x,
                 void* y);
};

const Kernels& scalar_kernels();
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
const Kernels& kernels(Isa isa);

}  // namespace posenc::fast::detail
