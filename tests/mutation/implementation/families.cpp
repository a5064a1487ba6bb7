// The table a mutant's library exports (mutant.hpp).
#include "mutant.hpp"

namespace {
const posenc::mutation::Families kFamilies{
    posenc::mutation::sinusoidal_row, posenc::mutation::sinusoidal_embed, posenc::mutation::sinusoidal_dot,
    posenc::mutation::rope_frequencies, posenc::mutation::rope_table,   posenc::mutation::rope_rotate,
    posenc::mutation::rope_dot,       posenc::mutation::alibi_slopes,   posenc::mutation::alibi_bias,
    posenc::mutation::learned_lookup,  posenc::mutation::attention};
}  // namespace

extern "C" __attribute__((visibility("default"))) const posenc::mutation::Families* posenc_mutant_families() {
  return &kFamilies;
}
