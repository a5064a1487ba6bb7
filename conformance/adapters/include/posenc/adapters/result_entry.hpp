#pragma once
// One result as a results file (SPEC.md §7) and a `posenc serve` judge request (§10) give it:
// "status" (ok, the default; invalid; unsupported) and, for ok, "values" of the format as hex
// floats (inf, -inf, nan allowed). The one reader of both.
#include <cstddef>
#include <optional>

#include "posenc/judge/implementation.hpp"
#include "posenc/vectors/json_reader.hpp"

namespace posenc::conformance {

// The entry's outcome in format f; `at` names the entry in errors. With `outputs`, an ok entry
// must have that many values (checked before any value is read).
Outcome read_result_outcome(const json_io::JsonValue& entry, Format f, const json_io::Location& at,
                            std::optional<std::size_t> outputs = std::nullopt);

}  // namespace posenc::conformance
