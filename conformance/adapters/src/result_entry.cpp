#include "posenc/adapters/result_entry.hpp"

#include "posenc/judge/case_judgement.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace posenc::conformance {

Outcome read_result_outcome(const json_io::JsonValue& entry, Format f, const json_io::Location& at,
                            const std::vector<std::size_t>& counts) {
  Outcome o;
  const auto status = json_io::optional_member(entry, "status");
  const std::string s = status ? json_io::read_string(*status, at.field("status")) : "ok";
  if (s == "ok") {
    o.status = Status::ok;
    const json_io::Location at_values = at.field("values");
    const auto values = json_io::array_elements(json_io::member(entry, "values", at), at_values);
    if (!counts.empty() && std::find(counts.begin(), counts.end(), values.size()) == counts.end()) {
      at_values.fail(std::to_string(values.size()) + " values; the case has " + value_counts_text(counts));
    }
    for (std::size_t k = 0; k < values.size(); ++k) {
      const json_io::Where at_value(at_values, k);
      if (json_io::read_string(values[k], at_value) == "nan") {
        o.values.push_back(NAN);
      } else {
        o.values.push_back(to_double(f, json_io::read_format_bits(values[k], f, at_value)));
      }
    }
  } else if (s == "invalid") {
    o.status = Status::invalid;
  } else if (s == "unsupported") {
    o.status = Status::unsupported;
    o.why_unsupported = NotJudged::refused;  // the entry says it has no answer for this case
  } else {
    at.field("status").fail("expected ok, invalid or unsupported, got '" + s + "'");
  }
  return o;
}

}  // namespace posenc::conformance
