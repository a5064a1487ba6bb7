#pragma once

namespace posenc::bench {

// naive_scalar/QK/A, naive_table/QK/A (baselines.cpp), reference/small and fast/small.
void register_naive_cases();

}  // namespace posenc::bench
