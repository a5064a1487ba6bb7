#pragma once
// Error metrics and tolerance profiles of SPEC.md §5.
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "posenc/vectors/vectors.hpp"

namespace posenc::conformance {

enum class Profile { exact, strict, standard };
std::string_view to_string(Profile p);
Profile parse_profile(std::string_view s);

// What the checker knows of one expected element, whatever the output format.
struct ElementSpec {
  long double exact = 0;  // the exact value (from the 41-digit decimal)
  double scale = 1;       // natural scale s (SPEC §5)
  double angle = 0;       // |t| of the element's rotation (1 for a frequency), 0 where there is none
  // `standard`'s allowance per unit of |t|, in units of the working format's u (SPEC.md section
  // 5): 6 + 2|ln w| + c for an element rotated by t = p w, 2|ln w| + c for a frequency w, c the
  // scaling's condition term.
  double angle_error = 0;
  bool copied = false;    // an input copied unchanged: the sign of zero counts, bit-identical required
  double strict = 0;      // the strict bound for its case type, in units of u s (SPEC §5)
};

// The elements of a valid case, from the group, the case and (for RoPE's attention factor and
// frequencies) the vector's own rope_frequencies-style knowledge computed by the reference.
std::vector<ElementSpec> element_specs(const VectorGroup& g, const VectorCase& c);

struct ElementError {
  double scaled = 0;  // |y - y*| / (u s)
  double ulp = 0;     // |y - y*| / ulp(y*)
  double bound = 0;   // allowed scaled error (exact: 0, meaning bit-identical)
  // scaled / bound (SPEC.md section 9): <= 1 exactly when the element passes. With a bound of 0
  // (the very bits asked for) it is 0 for a pass and infinite for a fail.
  double margin = 0;
  bool pass = true;
};

// The format an implementation forms angles and frequencies in when it declares none (SPEC.md
// section 5): binary64 for f64 storage, binary32 for f32, bf16 and f16 storage.
Format default_working_format(Format storage);

// User-given bounds replace the profile's (scaled units) when set.
struct Tolerance {
  Profile profile = Profile::strict;
  std::optional<double> scaled_bound;
  // The declared working format per storage format; a storage format without an entry has
  // default_working_format. `standard` counts its angle allowance in the working format's u.
  std::map<Format, Format> working;
  Format working_format(Format storage) const;
};

// The allowed error in units of u s, u the storage format's (0: bit-identical required), and
// the unit u s itself.
double scaled_bound(const ElementSpec& e, const Tolerance& t, Format storage);
long double scale_unit(Format f, double scale);

// expected_bits: the element's correct rounding in f (the vector's expected value).
ElementError check_element(const ElementSpec& e, std::uint64_t expected_bits, double y, Format f,
                           const Tolerance& t);

// Spacing of format f at |v| (the smallest subnormal at 0).
long double ulp_of(Format f, long double v);

}  // namespace posenc::conformance
