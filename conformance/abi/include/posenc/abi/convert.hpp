#pragma once
// posenc's parameter structs and formats to the C ABI's (posenc/plugin.h) and back: the one
// conversion the suite's plugin adapter and the plugins written on top of posenc share.
// to_abi only translates (validation is posenc's validate()); from_abi also refuses an
// enum-valued int outside its range, naming the ABI field, since no C++ value can hold it.
#include <optional>
#include <string_view>

#include "posenc/formats.hpp"
#include "posenc/params.hpp"
#include "posenc/plugin.h"

namespace posenc::plugin {

// The result's scaling.short_factor and scaling.long_factor point into p.scaling's vectors (null
// when empty): p must outlive the struct and stay unchanged while it is used. M-RoPE sections
// past the ABI's four are not carried; n_axes still counts them, so a plugin sees n_axes > 4
// and must refuse it (from_abi does).
posenc_rope_params to_abi(const RopeParams& p);
posenc_sinusoidal_params to_abi(const SinusoidalParams& p);
posenc_alibi_params to_abi(const AlibiParams& p);
posenc_dtype to_abi(Format f);
// p's attention parameters, pointing to `rope` and `alibi` (to_abi of p.rope and p.alibi, which
// must outlive the result) where p has them, else null. `scale` is the softmax scale in binary64:
// p.scale itself when given, else SPEC.md section 2.7's exact scale rounded to nearest (the
// reference's attention_scale); the scale's definition goes with it (posenc_scale_field).
posenc_attention_params to_abi(const AttentionParams& p, double scale, const posenc_rope_params* rope,
                               const posenc_alibi_params* alibi);

// InvalidParameter for an out-of-range enum-valued int (rope.layout, rope.partial, rope.n_axes,
// rope.scaling.kind, sinusoidal.layout, sinusoidal.frequencies, alibi.mode, dtype) or a negative
// or null factor array, e.g. "invalid rope.layout = 7: must be 0 (interleaved) or 1 (half)".
// rope.inverse and rope.scaling.truncate are flags: nonzero means set (plugin.h).
RopeParams from_abi(const posenc_rope_params& a);
SinusoidalParams from_abi(const posenc_sinusoidal_params& a);
AlibiParams from_abi(const posenc_alibi_params& a);
Format from_abi(posenc_dtype t);
// Reads the rope and alibi it points to; refuses an undefined mask code or scale_fields bit, and
// a given scale with a denominator or mscale bit. a.scale is kept only when POSENC_SCALE_GIVEN
// says it is the definition (otherwise it is a rounding of the definition, which a plugin that
// computes exactly does not read).
AttentionParams from_abi(const posenc_attention_params& a);
// A posenc_working_format code (field names it in the error): nothing for POSENC_WORKING_DEFAULT,
// InvalidParameter for a code plugin.h does not define.
std::optional<Format> working_format_from_abi(std::string_view field, std::int32_t w);
// A posenc_rounding_format code (attention's score and probability formats): nothing for
// POSENC_ROUNDING_NONE, InvalidParameter naming `field` for a code plugin.h does not define.
std::optional<Format> rounding_format_from_abi(std::string_view field, std::int32_t r);
std::int32_t rounding_format_to_abi(std::optional<Format> f);

}  // namespace posenc::plugin
