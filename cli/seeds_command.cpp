// `posenc seeds`: the worked examples of the seed documents (../shared/seeds), recomputed by the
// reference. The numbers the documents print are shown beside the reference's correctly rounded
// binary64 values; the tests check the same values.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "posenc/reference/reference.hpp"
#include "posenc/generator/seed_examples.hpp"

namespace posenc::cli {
namespace {

void sinusoidal_examples() {
  std::cout << "seed 000 (sinusoidal, Vaswani et al. 2017), d = 4, interleaved:\n";
  SinusoidalParams d4{.d_model = 4};
  for (std::int64_t pos : {0, 1, 2, 3, 6}) {
    std::cout << "  PE(" << pos << ") =";
    for (const auto& v : reference::sinusoidal_row(d4, pos)) std::printf(" %9.6f", v.f64());
    std::cout << "\n";
  }
  std::cout << "seed 000, d = 512: dot products depend only on the distance\n";
  SinusoidalParams d512{.d_model = 512};
  for (auto [a, b, printed] : seeds::kSinusoidalDots) {
    std::printf("  PE(%d).PE(%d) = %.6f   (document: %s)\n", static_cast<int>(a), static_cast<int>(b),
                reference::sinusoidal_dot(d512, a, b).f64(), printed);
  }
  LearnedParams gpt2{.max_positions = 1024, .dim = 768};
  std::cout << "seed 000, GPT-2 learned table 1024 x 768: " << gpt2.parameter_count()
            << " parameters (document: 786 432)\n";
  try {
    validate_learned_position(gpt2, 1024);
    std::cout << "  position 1024: accepted (WRONG)\n";
  } catch (const InvalidParameter& e) {
    std::cout << "  position 1024: " << e.what() << "\n";
  }
}

void rope_examples() {
  std::cout << "seed 003 (RoPE, head_dim 8, base 10000, interleaved; q, k from numpy default_rng(0)):\n";
  RopeParams p;
  p.head_dim = p.rotary_dim = 8;
  for (auto [m, n, printed] : seeds::kRopeDots) {
    std::int64_t pm[] = {m}, pn[] = {n};
    std::printf("  q at %5lld, k at %5lld: q.k = %+.6f   (document: %s)\n", static_cast<long long>(m),
                static_cast<long long>(n), reference::rope_dot(p, pm, pn, seeds::kQ, seeds::kK).f64(),
                printed);
  }
  double unrotated = 0;
  for (std::size_t i = 0; i < 8; ++i) unrotated += seeds::kQ[i] * seeds::kK[i];
  std::printf("  without rotation: q.k = %+.6f (binary64 sum)\n", unrotated);
}

}  // namespace

void add_seeds_command(Command& app) {
  Command c = app.add_command("seeds", "recompute the seed documents' worked examples");
  c.on_run([] {
    sinusoidal_examples();
    rope_examples();
  });
}

}  // namespace posenc::cli
