// Test build only: the AVX-512 path's kernels, unchanged, compiled onto AVX2 (avx512_on_avx2.hpp).
#include "avx512_on_avx2.hpp"
// Before the path's own includes, whose guards then keep the native definitions out.
#include "../avx512/kernels.cpp"  // NOLINT(bugprone-suspicious-include)
