// The C++ route of the README: an implementation under test (my_rope, binary64, interleaved
// pairs) wrapped as a posenc::conformance::Implementation and judged in process on rope/none
// under `standard`. Built against an installed posenc by tests/install/readme_routes_test.sh.
#include <cmath>
#include <iostream>
#include <posenc/judge/runner.hpp>
#include <posenc/reports/text.hpp>

namespace pc = posenc::conformance;

// The code under test: one head, interleaved pairs, binary64.
void my_rope(const double* x, double* y, std::int64_t dim, double base, std::int64_t position) {
  for (std::int64_t i = 0; i < dim / 2; ++i) {
    const double angle = static_cast<double>(position) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dim));
    y[2 * i] = x[2 * i] * std::cos(angle) - x[2 * i + 1] * std::sin(angle);
    y[2 * i + 1] = x[2 * i] * std::sin(angle) + x[2 * i + 1] * std::cos(angle);
  }
}

class MyRope final : public pc::Implementation {
 public:
  std::string name() const override { return "my_rope"; }
  std::vector<pc::Outcome> run(const pc::VectorGroup& g, const pc::VectorCase& c,
                               std::span<const posenc::Format> formats) override {
    std::vector<pc::Outcome> out(formats.size());  // each one unsupported unless filled in
    const auto* p = std::get_if<posenc::RopeParams>(&g.params);
    if (g.type != pc::CaseType::rope_rotate || p == nullptr || !c.valid || p->layout != posenc::RopeLayout::interleaved ||
        p->rotary_dim != p->head_dim || p->inverse || !p->mrope_section.empty() ||
        p->scaling.kind != posenc::RopeScalingKind::none) {
      return out;
    }
    for (std::size_t k = 0; k < formats.size(); ++k) {
      if (formats[k] != posenc::Format::f64) continue;
      out[k].status = pc::Status::ok;
      out[k].values.resize(c.x.size());
      my_rope(c.x.data(), out[k].values.data(), p->head_dim, p->base, c.position[0]);
    }
    return out;
  }
};

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  MyRope impl;
  pc::RunOptions options;
  options.vectors = argv[1];
  options.filter = {"rope/none"};
  options.tolerance.profile = pc::Profile::standard;
  const pc::RunReport report = pc::run_vectors(impl, options);
  pc::print_summary(std::cout, report);
  return report.conformant() ? 0 : 1;
}
