// The fast library's own refusals of the shipped invalid RoPE and attention parameters: a plan
// built from a case whose parameters alone are invalid is refused, naming the case's parameter
// (the vectors' `error`, SPEC.md section 2.6). The suite only asks that an invalid case be
// refused, and its adapter validates a case before the fast path sees it; a plan is the fast
// path's own entry, which a caller builds from a model's parameters with no adapter in front.
// Cases invalid by their inputs (lengths, values, positions) are not plans' to refuse: the
// kernels take raw storage, and their own checks are fast_test.cpp's.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <variant>

#include "posenc/errors.hpp"
#include "posenc/fast/attention.hpp"
#include "posenc/fast/fast.hpp"
#include "posenc/vectors/case_types.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/vector_json.hpp"

namespace posenc::conformance {
namespace {

const std::filesystem::path kVectors = POSENC_VECTORS_DIR;

// The parameter that validating `p` alone names; empty when p is valid.
template <class P>
std::string invalid_parameter(const P& p) {
  try {
    validate(p);
  } catch (const InvalidParameter& e) {
    return e.parameter();
  }
  return {};
}

// The parameter that building the fast plan of `p` names; empty when it is built.
template <class Plan, class P>
std::string refused_parameter(const P& p) {
  try {
    const Plan plan(p);
  } catch (const InvalidParameter& e) {
    return e.parameter();
  }
  return {};
}

TEST(FastRefusals, PlansOfInvalidParametersAreRefusedNamingThem) {
  int rope = 0, attention = 0;
  for (const auto& e : read_manifest(kVectors)) {
    const VectorFile file = load_listed_file(kVectors, e);
    for (const auto& g : file.groups) {
      for (const auto& c : g.tests) {
        if (c.valid) continue;
        SCOPED_TRACE(e.path + " tcId " + std::to_string(c.tc_id) + ", expected an error on " + c.error);
        const TypedCase k = typed_case(g, c);
        if (const auto* a = std::get_if<cases::Attention>(&k)) {
          if (invalid_parameter(a->p) != c.error) continue;  // invalid by its inputs
          EXPECT_EQ(refused_parameter<fast::AttentionPlan>(a->p), c.error);
          ++attention;
        } else if (const auto* r = std::get_if<cases::RopeRotate>(&k)) {
          if (invalid_parameter(r->p) != c.error) continue;  // invalid by its position or x
          EXPECT_EQ(refused_parameter<fast::RopePlan>(r->p), c.error);
          ++rope;
        }
      }
    }
  }
  // Every case of rope/invalid.json and attention/invalid.json invalid by its parameters alone (the
  // others name an input: a position, x, q, k, v, a mask or table entry): a case that stops
  // reaching a plan fails here, not silently.
  EXPECT_EQ(rope, 25);
  EXPECT_EQ(attention, 16);
}

}  // namespace
}  // namespace posenc::conformance
