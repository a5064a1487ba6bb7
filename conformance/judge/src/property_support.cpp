#include "property_support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance::properties {
namespace {

Format current_format = Format::f64;

}  // namespace

Format format() { return current_format; }
void set_format(Format f) { current_format = f; }
double unit() { return unit_roundoff(current_format); }

std::vector<double> call(Implementation& impl, const VectorGroup& g, const VectorCase& c) {
  const Format formats[] = {current_format};
  Outcome o = impl.run(g, c, formats).at(0);
  if (o.status == Status::unsupported) RC_DISCARD("unsupported");
  if (o.status != Status::ok) {
    RC_FAIL(std::string(to_string(g.type)) + ": the implementation answered " +
            (o.message.empty() ? "no values" : o.message));
  }
  if (o.values.size() != output_count(g, c)) {
    RC_FAIL(std::string(to_string(g.type)) + ": " + std::to_string(o.values.size()) + " values instead of " +
            std::to_string(output_count(g, c)));
  }
  return o.values;
}

std::vector<double> allowed(const VectorGroup& g, const VectorCase& c, const std::vector<double>& y,
                            const Tolerance& t) {
  VectorCase known = c;
  known.expected.exact.clear();
  for (double v : y) known.expected.exact.push_back(show(v));  // element_specs reads hexfloats exactly
  Tolerance identity = t;
  if (identity.profile == Profile::exact) identity.profile = Profile::strict;
  std::vector<double> out;
  for (const ElementSpec& e : element_specs(g, known)) {
    out.push_back(scaled_bound(e, identity, current_format) * static_cast<double>(scale_unit(current_format, e.scale)));
  }
  return out;
}

VectorGroup group_of(CaseType type, const Params& params) {
  VectorGroup g;
  g.type = type;
  g.params = params;
  return g;
}

VectorCase rope_case(const RopeParams& p, std::int64_t position, const std::vector<double>& x) {
  VectorCase c;
  c.position.assign(static_cast<std::size_t>(p.position_axes()), position);
  c.x = x;
  return c;
}

VectorCase position_case(std::int64_t position) {
  VectorCase c;
  c.position = {position};
  return c;
}

VectorCase bias_case(std::int64_t head, std::int64_t query, std::int64_t key) {
  VectorCase c;
  c.head = head;
  c.query = query;
  c.key = key;
  return c;
}

Rotated rotate(Implementation& impl, const RopeParams& p, std::int64_t position, const std::vector<double>& x,
               const Tolerance& t) {
  const VectorGroup g = group_of(CaseType::rope_rotate, p);
  const VectorCase c = rope_case(p, position, x);
  Rotated r;
  r.y = call(impl, g, c);
  r.allowed = allowed(g, c, r.y, t);
  return r;
}

RopeParams plain_rope() {
  RopeParams p;
  p.head_dim = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.rotary_dim = 2 * *rc::gen::inRange<std::int64_t>(1, p.head_dim / 2 + 1);
  p.base = *rc::gen::element(10000.0, 500000.0, 1e6, 2.0);
  p.layout = *rc::gen::element(RopeLayout::interleaved, RopeLayout::half);
  if (*rc::gen::arbitrary<bool>()) {
    p.scaling.kind = RopeScalingKind::linear;
    p.scaling.factor = *rc::gen::inRange(1, 9);
  }
  return p;
}

int grid_bits() { return std::min(19, spec(current_format).precision - 5); }

std::vector<double> any_vector(std::int64_t n) {
  const int g = grid_bits();
  std::vector<double> x;
  for (std::int64_t i = 0; i < n; ++i) x.push_back(std::ldexp(*rc::gen::inRange(-(1 << (g + 1)), 1 << (g + 1)), -g));
  return x;
}

std::vector<double> any_nonzero_vector(std::int64_t n) {
  const int g = grid_bits();
  std::vector<double> x;
  for (std::int64_t i = 0; i < n; ++i) {
    const int magnitude = *rc::gen::inRange(1, 1 << (g + 1));
    x.push_back(std::ldexp(*rc::gen::arbitrary<bool>() ? -magnitude : magnitude, -g));
  }
  return x;
}

std::int64_t any_position(std::int64_t limit) { return *rc::gen::inRange<std::int64_t>(0, limit); }

std::string show(double v) {
  char s[40];
  std::snprintf(s, sizeof s, "%a", v);
  return s;
}

std::string show(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + show(v[i]);
  return s + "]";
}

std::string at(const char* what, std::int64_t value) { return std::string(what) + " " + std::to_string(value); }

}  // namespace posenc::conformance::properties
