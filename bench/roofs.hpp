#pragma once

namespace posenc::bench {

// copy/W, copy_nontemporal/W and scale_in_place/W for every workload W (common.hpp).
void register_roofs();

}  // namespace posenc::bench
