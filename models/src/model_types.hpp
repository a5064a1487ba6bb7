#pragma once
// The model types of the pinned transformers release whose text model's RoPE was run by its own
// code and judged against posenc's vectors for its config (models/verify/verify_model_types.py,
// which writes model_types.inc and docs/models.md from that run; `make verify-models`).
#include <optional>
#include <string_view>

#include "posenc/params/rope.hpp"

namespace posenc::models {

struct ModelTypeEntry {
  const char* model_type;
  // Measured: a probe forward at position 1 with unit vectors shows which element each is paired with.
  RopeLayout layout;
  // Measured with the same probe: the partner of e_0 gets -m sin t, not +m sin t: the model rotates
  // by -t (SPEC.md 2.3's `inverse`; NanoChat's rotate_half has the signs flipped).
  bool backward;
  // Every config run (the class defaults and each rope_type the config holds) agrees with posenc's
  // vectors to binary64 rounding (standard in f64) on every RoPE layer of posenc's scope.
  bool verified;
  // The config class's values for keys a saved config.json omits when they are at their default
  // (save_pretrained writes the difference from the defaults): rope_theta and partial_rotary_factor.
  double default_theta;
  double default_partial_rotary_factor;
  // The config class's attribute_map as "alias=key;alias=key": a config.json may name a key by
  // either (PretrainedConfig.__setattr__ / __getattribute__).
  const char* attribute_map;
  // Why it is not verified, or what else the model does with positions (reported).
  const char* note;
};

// The release the entries were measured with ("transformers 5.25.0").
extern const char* const kModelTypesVerifiedWith;

// The entry of a model type, or nullptr.
const ModelTypeEntry* find_model_type(std::string_view model_type);

}  // namespace posenc::models
