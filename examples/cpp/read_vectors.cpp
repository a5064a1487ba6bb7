#include <algorithm>
#include <cmath>
#include <iostream>

#include "posenc/vectors/vector_json.hpp"

int main() {
  using namespace posenc;
  auto file = conformance::load_vector_file("vectors/rope/none.json");
  for (const auto& g : file.groups) {
    const auto* p = std::get_if<RopeParams>(&g.params);
    if (g.type != conformance::CaseType::rope_rotate || !p || p->rotary_dim != p->head_dim || p->inverse) continue;
    for (const auto& c : g.tests) {
      std::vector<double> y = c.x;  // your_rope(c.x, c.position[0], *p) goes here
      double worst = 0;
      for (std::size_t j = 0; j < y.size(); ++j)
        worst = std::max(worst, std::fabs(y[j] - to_double(Format::f64, c.expected.of(Format::f64)[j])));
      std::cout << c.tc_id << " max abs error " << worst << "\n";
    }
  }
}
