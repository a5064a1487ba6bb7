#pragma once

namespace posenc::bench {

// copy/W, copy_nontemporal/W and scale_in_place/W for every workload W (common.hpp), and
// copy_nontemporal_2threads/W for those run on 2 threads.
void register_roofs();

}  // namespace posenc::bench
