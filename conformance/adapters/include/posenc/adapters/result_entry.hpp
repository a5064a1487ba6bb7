#pragma once
// One result as a results file (SPEC.md §7) and a `posenc serve` judge request (§10) give it:
// "status" (ok, the default; invalid; unsupported) and, for ok, "values" of the format as hex
// floats (inf, -inf, nan allowed). The one reader of both.
#include <cstddef>
#include <optional>
#include <vector>

#include "posenc/judge/implementation.hpp"
#include "posenc/vectors/json_reader.hpp"

namespace posenc::conformance {

// The entry's outcome in format f; `at` names the entry in errors. With `counts` (a case's
// accepted_value_counts), an ok entry must have one of them as its number of values (checked
// before any value is read).
Outcome read_result_outcome(const json_io::JsonValue& entry, Format f, const json_io::Location& at,
                            const std::vector<std::size_t>& counts = {});

}  // namespace posenc::conformance
