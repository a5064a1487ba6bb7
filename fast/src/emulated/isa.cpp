// Test build only: run-time selection that reports the emulated AVX-512 path wherever AVX2 runs.
#define POSENC_AVX512_EMULATED 1
#include "../isa.cpp"  // NOLINT(bugprone-suspicious-include)
