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

// What an attention element's bound is formed from (SPEC.md section 5, "Attention"): the
// reference's ingredients and the row's sizes, whatever the formats; attention_bound forms the
// bound from them for a tolerance and the formats.
struct AttentionElement {
  bool lse = false;        // L of its row (else an element of O)
  double kappa = 0;        // O: sum_j p_j |v_jk - O_k|
  double pv = 0;           // O: sum_j p_j |v_jk| (>= |O_k|)
  double magnitude = 0;    // |O_k| or |L|
  double v_range = 0;      // O: max_j v_jk - min_j v_jk over the visible keys
  double v_max = 0;        // O: max_j |v_jk|
  double sigma = 0;        // the row's max_j scale m^2 |q'_i| |k'_j|: the largest |scale q'.k'| can be
  double bias = 0;         // the row's max_j |b_ij|
  double logit_range = 0;  // the row's max_j s_ij - min_j s_ij
  double keys = 0;         // n, the keys the row sees
  double head_dim = 0;
  bool rotated = false;    // q and k are rotated (by RoPE, computed or from a given table)
  // standard: the largest (6 + 2|ln w_i| + c_i) |t_i| over q's pairs, and over the visible keys'
  // (0 for a given table, whose angles the code does not form)
  double query_angle_error = 0, key_angle_error = 0;
};

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
  std::optional<AttentionElement> attention;  // attention elements: the bound is formed from these
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
  // The working format of attention's arithmetic where an implementation declares one of its own
  // (Implementation::attention_working_format); without an entry, working_format's.
  std::map<Format, Format> attention_working;
  Format attention_working_format(Format storage) const;
  // Attention (SPEC.md section 5): the formats the scores s = scale q.k (+ bias) and the
  // softmax's probabilities P are rounded to, per storage format (declared by the implementation,
  // or the user's); without an entry, or with an empty one, they stay in the working format.
  std::map<Format, std::optional<Format>> score, probability;
  std::optional<Format> score_format(Format storage) const;
  std::optional<Format> probability_format(Format storage) const;
};

// The allowed error in units of u s, u the storage format's (0: bit-identical required), and
// the unit u s itself.
double scaled_bound(const ElementSpec& e, const Tolerance& t, Format storage);
long double scale_unit(Format f, double scale);

// expected_bits: the element's correct rounding in f (the vector's expected value).
ElementError check_element(const ElementSpec& e, std::uint64_t expected_bits, double y, Format f,
                           const Tolerance& t);

// An attention element's bound in absolute units (SPEC.md section 5), `storage` its check's
// format (for L: lse_format of the case's storage format).
double attention_bound(const AttentionElement& e, const Tolerance& t, Format storage);

// Spacing of format f at |v| (the smallest subnormal at 0).
long double ulp_of(Format f, long double v);

}  // namespace posenc::conformance
