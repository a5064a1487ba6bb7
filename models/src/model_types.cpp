#include "model_types.hpp"

#include <algorithm>

namespace posenc::models {
namespace {

// Generated, sorted by model_type.
constexpr ModelTypeEntry kEntries[] = {
#include "model_types.inc"
};

}  // namespace

const char* const kModelTypesVerifiedWith = POSENC_MODEL_TYPES_VERIFIED_WITH;

const ModelTypeEntry* find_model_type(std::string_view model_type) {
  const auto* end = std::end(kEntries);
  const auto* it = std::lower_bound(std::begin(kEntries), end, model_type,
                                    [](const ModelTypeEntry& e, std::string_view t) { return e.model_type < t; });
  return it != end && it->model_type == model_type ? it : nullptr;
}

}  // namespace posenc::models
