#pragma once
// posenc/plugin.h parameter structs back to posenc's own definitions (for plugins written on top
// of posenc). The reverse of the suite's conversion; validation is left to posenc's validate().
#include "posenc/params.hpp"
#include "posenc/plugin.h"

namespace posenc::plugin {

RopeParams from_abi(const posenc_rope_params& a);
SinusoidalParams from_abi(const posenc_sinusoidal_params& a);
AlibiParams from_abi(const posenc_alibi_params& a);

}  // namespace posenc::plugin
