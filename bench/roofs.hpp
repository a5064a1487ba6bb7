#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace posenc::bench {

// The distances, in KiB, of the prefetched roofs: those fast/ prefetches at (fast/src/isa.cpp,
// prefetch_distance_bytes).
inline constexpr std::size_t kRoofPrefetchKiB[] = {2, 8};

// copy/W, copy_nontemporal/W, scale_in_place/W and their prefetched forms (copy_roofs,
// scale_roofs) for every workload W (common.hpp), and copy_nontemporal_2threads/W for those run
// on 2 threads.
void register_roofs();

// The names of W's copies and of its in-place scales: the fastest of each is W's roof out of
// place and in place.
std::vector<std::string> copy_roofs(const std::string& w);
std::vector<std::string> scale_roofs(const std::string& w);

}  // namespace posenc::bench
