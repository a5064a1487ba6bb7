#pragma once

namespace posenc::bench {

// posenc fast on the workloads (common.hpp): fused/W/FORMAT/LAYOUT/MODE/THREADS, MODE out, in,
// out-cached or out-streaming (the store mode forced); cached/... through a RopeCache.
void register_rope_cases();

}  // namespace posenc::bench
