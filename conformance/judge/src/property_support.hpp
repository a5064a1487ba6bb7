#pragma once
// What every property check shares: calls into the implementation under test (one case, binary64
// output), random inputs, and the allowed error of each output element taken from the same
// profile bounds the golden-vector checks use (SPEC.md §5).
#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "posenc/judge/implementation.hpp"
#include "posenc/judge/profiles.hpp"

namespace posenc::conformance::properties {

// The output format the properties ask the implementation for (one run per format), and its
// unit roundoff u.
Format format();
void set_format(Format f);
double unit();

using Property = std::function<void(Implementation&, const Tolerance&)>;

struct Named {
  const char* name;
  Property property;
};

std::vector<Named> rope_properties();
std::vector<Named> absolute_properties();   // sinusoidal, ALiBi, learned
std::vector<Named> model_properties();      // a tiny attention; differential against the reference
std::vector<Named> attention_properties();  // identities of the implementation's attention

// One case through the implementation, in format(): an unsupported case is discarded, any other failure
// fails the property.
std::vector<double> call(Implementation& impl, const VectorGroup& g, const VectorCase& c);
// Per output element of `y` (the implementation's answer to g, c), the largest error the
// profile allows. Identities compare computed values with each other, so the exact profile
// uses the strict bounds here.
std::vector<double> allowed(const VectorGroup& g, const VectorCase& c, const std::vector<double>& y,
                            const Tolerance& t);

VectorGroup group_of(CaseType type, const Params& params);
VectorCase rope_case(const RopeParams& p, std::int64_t position, const std::vector<double>& x);
VectorCase position_case(std::int64_t position);
VectorCase bias_case(std::int64_t head, std::int64_t query, std::int64_t key);

// The rotation of x at `position` (every axis) and the allowed error of each element.
struct Rotated {
  std::vector<double> y, allowed;
};
Rotated rotate(Implementation& impl, const RopeParams& p, std::int64_t position, const std::vector<double>& x,
               const Tolerance& t);

// RoPE without scaling or with linear scaling by 1..8, no M-RoPE: the configurations for which
// rotations compose as plain rotations.
RopeParams plain_rope();
// Inputs are multiples of 2^-g in [-2, 2), g = grid_bits() = min(19, P - 5) for format()'s
// precision P (2^-19 in binary64 and binary32, 2^-6 in f16, 2^-3 in bf16): such a value has at
// most g + 1 significant bits, the sum of two or twice one g + 2, and its product with any of
// the generators' dyadic factors of up to 3 significant bits (40 = 101b * 2^3) g + 4 < P, so
// all of them are exact in format(). No exact tie is then asked of the reference, which cannot
// certify one (SPEC.md section 6, property-based checks).
int grid_bits();
std::vector<double> any_vector(std::int64_t n);
// The same grid without 0: an attention problem with zeros makes exactly orthogonal q and k,
// whose logit is an exact 0 that the reference reaches through rotations and cannot give a sign.
std::vector<double> any_nonzero_vector(std::int64_t n);
std::int64_t any_position(std::int64_t limit = std::int64_t{1} << 31);

std::string show(const std::vector<double>& v);
std::string show(double v);
std::string at(const char* what, std::int64_t value);

}  // namespace posenc::conformance::properties
