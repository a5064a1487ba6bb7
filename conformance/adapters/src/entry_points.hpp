#pragma once
// plugin.h's entry points: an id for each (what a request names), its symbol, and its function
// type taken from the declaration itself, so a change to plugin.h cannot leave a stale copy here.
#include <array>
#include <cstdint>

#include "posenc/plugin.h"

namespace posenc::conformance {

enum class EntryPoint : std::uint32_t {
  rope_apply,
  rope_table,
  rope_frequencies,
  sinusoidal_table,
  sinusoidal_embed,
  alibi_slopes,
  alibi_bias,
  learned_lookup,
  attention,
};

// Symbols in EntryPoint's order (the id is the index).
inline constexpr std::array<const char*, 9> kEntryPointSymbols{
    "posenc_rope_apply",   "posenc_rope_table",   "posenc_rope_frequencies", "posenc_sinusoidal_table",
    "posenc_sinusoidal_embed", "posenc_alibi_slopes", "posenc_alibi_bias",      "posenc_learned_lookup",
    "posenc_attention"};
static_assert(kEntryPointSymbols.size() == static_cast<std::size_t>(EntryPoint::attention) + 1);

inline const char* symbol_of(EntryPoint e) { return kEntryPointSymbols[static_cast<std::size_t>(e)]; }

// The set of entry points a library exports, one bit per EntryPoint.
inline constexpr std::uint32_t bit_of(EntryPoint e) { return std::uint32_t{1} << static_cast<std::uint32_t>(e); }

namespace entry {
using Query = decltype(&posenc_plugin_query);
using RopeApply = decltype(&posenc_rope_apply);
using RopeTable = decltype(&posenc_rope_table);
using RopeFrequencies = decltype(&posenc_rope_frequencies);
using SinusoidalTable = decltype(&posenc_sinusoidal_table);
using SinusoidalEmbed = decltype(&posenc_sinusoidal_embed);
using AlibiSlopes = decltype(&posenc_alibi_slopes);
using AlibiBias = decltype(&posenc_alibi_bias);
using LearnedLookup = decltype(&posenc_learned_lookup);
using Attention = decltype(&posenc_attention);
}  // namespace entry

}  // namespace posenc::conformance
