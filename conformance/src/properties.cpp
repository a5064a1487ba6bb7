#include "posenc/conformance/properties.hpp"

#include <rapidcheck.h>

#include <bit>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>

namespace posenc::conformance {
namespace {

constexpr double kU = 0x1p-53;  // properties run in binary64

bool standard(const Tolerance& t) { return !t.scaled_bound && t.profile == Profile::standard; }

// What one call through the implementation returned; a case it does not support is discarded.
std::vector<double> call(Implementation& impl, VectorGroup g, VectorCase c) {
  const Format formats[] = {Format::f64};
  Outcome o = impl.run(g, c, formats).at(0);
  if (o.status == Status::unsupported) RC_DISCARD("unsupported");
  if (o.status != Status::ok) RC_FAIL("the implementation answered " + (o.message.empty() ? "no values" : o.message));
  if (o.values.size() != c.x.size() && g.type == CaseType::rope_rotate) RC_FAIL("wrong number of outputs");
  return o.values;
}

std::vector<double> rotate(Implementation& impl, const RopeParams& p, std::int64_t position, const std::vector<double>& x) {
  VectorGroup g;
  g.type = CaseType::rope_rotate;
  g.params = p;
  VectorCase c;
  c.position = std::vector<std::int64_t>(static_cast<std::size_t>(p.position_axes()), position);
  c.x = x;
  return call(impl, g, c);
}

// RoPE without scaling or with linear scaling (powers of two), standard partial rotary.
RopeParams any_rope() {
  RopeParams p;
  p.head_dim = 2 * *rc::gen::inRange<std::int64_t>(1, 9);
  p.rotary_dim = 2 * *rc::gen::inRange<std::int64_t>(1, p.head_dim / 2 + 1);
  p.base = *rc::gen::element(10000.0, 500000.0, 1e6, 2.0);
  p.layout = *rc::gen::element(RopeLayout::interleaved, RopeLayout::half);
  return p;
}

std::vector<double> any_vector(std::int64_t n) {
  std::vector<double> x;
  for (std::int64_t i = 0; i < n; ++i) x.push_back(std::ldexp(static_cast<double>(*rc::gen::inRange(-(1 << 20), 1 << 20)), -19));
  return x;
}

std::int64_t any_position() { return *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 31); }

double frequency(const RopeParams& p, std::int64_t i) {
  double w = std::pow(p.base, -2.0 * static_cast<double>(i) / static_cast<double>(p.rotary_dim));
  return p.scaling.kind == RopeScalingKind::linear ? w / *p.scaling.factor : w;
}

// Allowed error of element j of a rotation at `position` (SPEC §5 bounds in units of u * scale).
double tolerance(const RopeParams& p, const std::vector<double>& x, std::int64_t position, std::size_t j,
                 const Tolerance& t) {
  for (std::int64_t i = 0; i < p.rotary_dim / 2; ++i) {
    const auto a = static_cast<std::size_t>(p.pair_first(i)), b = static_cast<std::size_t>(p.pair_second(i));
    if (j != a && j != b) continue;
    const double w = frequency(p, i), angle = std::fabs(static_cast<double>(position) * w);
    const double units = (t.scaled_bound ? *t.scaled_bound : 6) + (standard(t) ? (6 + 2 * std::fabs(std::log(w))) * angle : 0);
    return units * kU * std::hypot(x[a], x[b]);
  }
  return 0;  // a copied element must be exact
}

std::string show(const std::vector<double>& v) {
  std::ostringstream s;
  s << std::hexfloat << "[";
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str() + "]";
}

std::string describe(const RopeParams& p) {
  return "head_dim " + std::to_string(p.head_dim) + ", rotary_dim " + std::to_string(p.rotary_dim) + ", base " +
         std::to_string(p.base) + ", " + std::string(to_string(p.layout));
}

using Property = std::function<void(Implementation&, const Tolerance&)>;

struct Named {
  const char* name;
  Property property;
};

const std::vector<Named>& properties() {
  static const std::vector<Named> all{
      {"rope_zero_rotation: position 0 is the identity",
       [](Implementation& impl, const Tolerance& t) {
         const auto p = any_rope();
         const auto x = any_vector(p.head_dim);
         const auto y = rotate(impl, p, 0, x);
         for (std::size_t j = 0; j < x.size(); ++j) {
           if (!(std::fabs(y[j] - x[j]) <= tolerance(p, x, 0, j, t))) {
             RC_FAIL(describe(p) + ": x = " + show(x) + ", y = " + show(y) + " at element " + std::to_string(j));
           }
         }
       }},
      {"rope_partial_passthrough: dims past rotary_dim are copied bit for bit",
       [](Implementation& impl, const Tolerance&) {
         auto p = any_rope();
         const auto pos = any_position();
         const auto x = any_vector(p.head_dim);
         const auto y = rotate(impl, p, pos, x);
         for (auto j = static_cast<std::size_t>(p.rotary_dim); j < x.size(); ++j) {
           if (std::bit_cast<std::uint64_t>(y[j]) != std::bit_cast<std::uint64_t>(x[j])) {
             RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ": element " + std::to_string(j) + " changed");
           }
         }
       }},
      {"rope_scaling_by_two: R(2x) = 2 R(x) exactly",
       [](Implementation& impl, const Tolerance&) {
         const auto p = any_rope();
         const auto pos = any_position();
         const auto x = any_vector(p.head_dim);
         auto x2 = x;
         for (auto& v : x2) v *= 2;
         const auto y = rotate(impl, p, pos, x), y2 = rotate(impl, p, pos, x2);
         for (std::size_t j = 0; j < y.size(); ++j) {
           if (y2[j] != 2 * y[j]) RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ", element " + std::to_string(j));
         }
       }},
      {"rope_norm_preservation: |R x| = |x|",
       [](Implementation& impl, const Tolerance& t) {
         const auto p = any_rope();
         const auto pos = any_position();
         const auto x = any_vector(p.head_dim);
         const auto y = rotate(impl, p, pos, x);
         long double nx = 0, ny = 0, allowed = 0;
         for (std::size_t j = 0; j < x.size(); ++j) {
           nx += static_cast<long double>(x[j]) * x[j];
           ny += static_cast<long double>(y[j]) * y[j];
           allowed += tolerance(p, x, pos, j, t);
         }
         if (!(std::fabs(std::sqrt(ny) - std::sqrt(nx)) <= allowed + 2 * kU * std::sqrt(nx))) {
           RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ": |x| and |y| differ");
         }
       }},
      {"rope_inverse: the inverse rotation undoes the rotation",
       [](Implementation& impl, const Tolerance& t) {
         auto p = any_rope();
         const auto pos = any_position();
         const auto x = any_vector(p.head_dim);
         const auto y = rotate(impl, p, pos, x);
         p.inverse = true;
         const auto back = rotate(impl, p, pos, y);
         for (std::size_t j = 0; j < x.size(); ++j) {
           if (!(std::fabs(back[j] - x[j]) <= 2 * tolerance(p, x, pos, j, t) + 4 * kU * std::fabs(x[j]))) {
             RC_FAIL(describe(p) + ", position " + std::to_string(pos) + ": element " + std::to_string(j) +
                     " comes back as " + std::to_string(back[j]) + " from " + std::to_string(x[j]));
           }
         }
       }},
      {"rope_distance_only: q.k at (m, n) equals q.k at (m + s, n + s)",
       [](Implementation& impl, const Tolerance& t) {
         const auto p = any_rope();
         const auto m = *rc::gen::inRange<std::int64_t>(0, 1 << 20), n = *rc::gen::inRange<std::int64_t>(0, 1 << 20);
         const auto shift = *rc::gen::inRange<std::int64_t>(0, 1 << 20);
         const auto q = any_vector(p.head_dim), k = any_vector(p.head_dim);
         auto logit = [&](std::int64_t a, std::int64_t b, double& allowed) {
           const auto rq = rotate(impl, p, a, q), rk = rotate(impl, p, b, k);
           long double sum = 0;
           for (std::size_t j = 0; j < q.size(); ++j) {
             sum += static_cast<long double>(rq[j]) * rk[j];
             allowed += tolerance(p, q, a, j, t) * std::fabs(k[j]) + tolerance(p, k, b, j, t) * std::fabs(q[j]);
           }
           return static_cast<double>(sum);
         };
         double allowed = 0;
         const double before = logit(m, n, allowed), after = logit(m + shift, n + shift, allowed);
         long double qq = 0, kk = 0;
         for (std::size_t j = 0; j < q.size(); ++j) {
           qq += static_cast<long double>(q[j]) * q[j];
           kk += static_cast<long double>(k[j]) * k[j];
         }
         allowed += 2 * static_cast<double>(p.head_dim) * kU * static_cast<double>(std::sqrt(qq * kk));
         if (!(std::fabs(before - after) <= allowed)) {
           RC_FAIL(describe(p) + ": q.k = " + std::to_string(before) + " at (" + std::to_string(m) + ", " +
                   std::to_string(n) + ") but " + std::to_string(after) + " after shifting both by " +
                   std::to_string(shift));
         }
       }},
      {"rope_linear_scaling: factor s at position s p equals no scaling at p",
       [](Implementation& impl, const Tolerance& t) {
         const auto none = any_rope();
         auto linear = none;
         linear.scaling.kind = RopeScalingKind::linear;
         linear.scaling.factor = *rc::gen::element(2.0, 4.0, 8.0);
         const auto pos = *rc::gen::inRange<std::int64_t>(0, 1 << 24);
         const auto x = any_vector(none.head_dim);
         const auto a = rotate(impl, none, pos, x);
         const auto b = rotate(impl, linear, pos * static_cast<std::int64_t>(*linear.scaling.factor), x);
         for (std::size_t j = 0; j < x.size(); ++j) {
           if (!(std::fabs(a[j] - b[j]) <= 2 * tolerance(none, x, pos, j, t))) {
             RC_FAIL(describe(none) + ", factor " + std::to_string(*linear.scaling.factor) + ", position " +
                     std::to_string(pos) + ": element " + std::to_string(j) + " differs");
           }
         }
       }},
      {"learned_out_of_range: positions outside [0, max_positions) are refused",
       [](Implementation& impl, const Tolerance&) {
         LearnedParams p;
         p.max_positions = *rc::gen::inRange<std::int64_t>(1, 64);
         p.dim = *rc::gen::inRange<std::int64_t>(1, 4);
         VectorGroup g;
         g.type = CaseType::learned_lookup;
         g.params = p;
         g.table.assign(static_cast<std::size_t>(p.parameter_count()), 0.5);
         VectorCase c;
         c.position = {*rc::gen::element<std::int64_t>(-1, p.max_positions, p.max_positions + 1, 1 << 20)};
         const Format formats[] = {Format::f64};
         const Outcome o = impl.run(g, c, formats).at(0);
         if (o.status == Status::unsupported) RC_DISCARD("unsupported");
         if (o.status != Status::invalid) {
           RC_FAIL("position " + std::to_string(c.position[0]) + " of a " + std::to_string(p.max_positions) +
                   "-row table was not refused");
         }
       }},
  };
  return all;
}

}  // namespace

std::vector<PropertyResult> run_properties(Implementation& impl, const PropertyOptions& options) {
  // RapidCheck announces its configuration once; make the seed it shows the one used here.
  setenv("RC_PARAMS", ("seed=" + std::to_string(options.seed)).c_str(), 1);
  std::vector<PropertyResult> out;
  for (const auto& [name, property] : properties()) {
    rc::detail::TestParams params;
    params.seed = options.seed;
    params.maxSuccess = options.cases;
    rc::detail::TestMetadata metadata;
    metadata.id = name;
    const auto result =
        rc::detail::checkTestable([&, p = property] { p(impl, options.tolerance); }, metadata, params);
    PropertyResult r;
    r.name = name;
    rc::detail::SuccessResult success;
    rc::detail::FailureResult failure;
    rc::detail::GaveUpResult gave_up;
    if (result.match(success)) {
      r.status = "passed";
      r.cases = success.numSuccess;
    } else if (result.match(failure)) {
      r.status = "failed";
      r.cases = failure.numSuccess;
      // RapidCheck's description starts with the source line of the failed check; keep the message.
      std::string text = failure.description;
      if (auto colon = text.find(":\n"); colon != std::string::npos) text = text.substr(colon + 2);
      if (auto blank = text.find("\n\n"); blank != std::string::npos) text = text.substr(blank + 2);
      for (auto& ch : text) {
        if (ch == '\n') ch = ' ';
      }
      r.counterexample = text + " (shrunk; replay with --seed " + std::to_string(options.seed) + ")";
    } else if (result.match(gave_up)) {
      r.status = "unsupported";
      r.cases = gave_up.numSuccess;
    } else {
      r.status = "failed";
      r.counterexample = "the property could not run";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace posenc::conformance
