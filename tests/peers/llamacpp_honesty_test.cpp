// Is the llama.cpp plugin honest? Its raw posenc_rope_apply output, called directly (dlopen, no
// suite in between), on the small cases of the shipped vectors (|position| <= 16, head_dim <= 128,
// one token) against the vectors' certified expected values, before any verdict of `posenc
// conform` on it is trusted. A mapping error (a layout, n_dims, freq_scale, attention factor,
// YaRN argument or position passed wrong) moves an element by a sizeable share of its pair's
// norm; ggml's float32 angles at these positions by far less than the tolerance. Each run also
// shows that the comparison can fail: the same cases with the layout swapped, and with every
// position off by one, must each fail some case.
//
// The plugin: argv[1] (build/peers/llamacpp/posenc_llamacpp_plugin.so); when it is absent, the
// test skips (status 77) with build/peers/llamacpp/unavailable's reason (the sdist could not be had).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "posenc/abi/convert.hpp"
#include "posenc/formats.hpp"
#include "posenc/plugin.h"
#include "posenc/vectors/vector_json.hpp"

namespace {

using namespace posenc;
namespace fs = std::filesystem;

std::string plugin_path;

using RopeApply = decltype(&posenc_rope_apply);

RopeApply load_rope_apply() {
  void* handle = dlopen(plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return nullptr;
  return reinterpret_cast<RopeApply>(dlsym(handle, "posenc_rope_apply"));
}

std::string skip_reason() {
  std::ifstream in(fs::path(plugin_path).parent_path() / "unavailable");
  std::stringstream s;
  s << in.rdbuf();
  return s.str().empty() ? "plugin " + plugin_path + " not built" : s.str();
}

enum class Break { none, swap_layout, position_plus_one };

// Storage of the value v in f (f32 or f16, as the plugin's dtype): its bit pattern.
std::uint64_t store(Format f, double v) { return *exact_bits(f, v); }

struct Tally {
  int compared = 0, failed = 0;
  std::string first_failure;
};

// Each small rotation case of FILE in f32 and f16 (when its inputs are exact there), through the
// plugin; an element fails when it is off its expected value by more than tolerance(f) times the
// expected vector's norm.
void compare_file(RopeApply apply, const std::string& file, Break b, Tally& tally) {
  const auto vf = conformance::load_vector_file(fs::path(POSENC_VECTORS_DIR) / file);
  for (const auto& g : vf.groups) {
    const auto* p = std::get_if<RopeParams>(&g.params);
    if (g.type != conformance::CaseType::rope_rotate || !p || p->head_dim > 128) continue;
    RopeParams params = *p;
    if (b == Break::swap_layout)
      params.layout = params.layout == RopeLayout::interleaved ? RopeLayout::half : RopeLayout::interleaved;
    const posenc_rope_params abi = plugin::to_abi(params);
    for (const auto& c : g.tests) {
      if (!c.valid) continue;
      bool small = true;
      for (auto pos : c.position) small = small && std::llabs(pos) <= 16;
      if (!small) continue;
      for (Format f : {Format::f32, Format::f16}) {
        if (!conformance::inputs_exact_in(g, c, f) || c.expected.of(f).empty()) continue;
        const std::size_t n = c.x.size(), es = f == Format::f32 ? 4 : 2;
        std::vector<unsigned char> x(n * es), y(n * es);
        for (std::size_t j = 0; j < n; ++j) {
          const std::uint64_t bits = store(f, c.x[j]);
          std::memcpy(&x[j * es], &bits, es);  // little-endian: the low bytes hold the format's pattern
        }
        std::vector<std::int64_t> positions = c.position;
        if (b == Break::position_plus_one)
          for (auto& pos : positions) pos += 1;
        const posenc_status s = apply(&abi, plugin::to_abi(f), 1, 1, positions.data(), x.data(), 0, 0, y.data(), 0, 0);
        if (s == POSENC_UNSUPPORTED) continue;
        ASSERT_EQ(s, POSENC_OK) << file << " tcId " << c.tc_id;
        const auto& expected = c.expected.of(f);
        double norm = 0;
        for (auto e : expected) norm += to_double(f, e) * to_double(f, e);
        // f32: 2^-12 of the norm (ggml's float32 recurrence at |position| <= 16 and up to 64 pairs
        // errs by < 2^-16); f16: its storage rounding of the elements adds 2^-11 relative.
        const double tolerance = (f == Format::f32 ? 0x1p-12 : 0x1p-9) * std::sqrt(norm);
        ++tally.compared;
        for (std::size_t j = 0; j < n; ++j) {
          std::uint64_t bits = 0;
          std::memcpy(&bits, &y[j * es], es);
          const double got = to_double(f, bits), want = to_double(f, expected[j]);
          if (!(std::fabs(got - want) <= tolerance)) {
            if (tally.failed++ == 0)
              tally.first_failure = file + " tcId " + std::to_string(c.tc_id) + " " + std::string(to_string(f)) +
                                    " element " + std::to_string(j) + ": " + std::to_string(got) + ", expected " +
                                    std::to_string(want);
            break;
          }
        }
      }
    }
  }
}

// The files of the parameter sets the plugin maps, and the number of cases of each it must
// answer (so that a plugin answering nothing cannot pass).
const std::vector<std::pair<std::string, int>> kFiles = {
    {"rope/none.json", 20},  {"rope/partial.json", 10}, {"rope/linear.json", 4},
    {"rope/yarn.json", 4},   {"rope/longrope.json", 2}, {"rope/mrope.json", 2},
};

class LlamacppHonesty : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(plugin_path)) GTEST_SKIP() << skip_reason();
    apply_ = load_rope_apply();
    ASSERT_NE(apply_, nullptr) << "cannot load posenc_rope_apply from " << plugin_path << ": " << dlerror();
  }
  RopeApply apply_ = nullptr;
};

TEST_F(LlamacppHonesty, RawOutputMatchesTheVectorsOnSmallCases) {
  for (const auto& [file, least] : kFiles) {
    Tally t;
    compare_file(apply_, file, Break::none, t);
    EXPECT_EQ(t.failed, 0) << t.first_failure;
    EXPECT_GE(t.compared, least) << file << ": too few small cases answered";
    std::cout << file << ": " << t.compared << " small cases compared, " << t.failed << " off\n";
  }
}

TEST_F(LlamacppHonesty, TheComparisonCatchesADeliberateBreak) {
  for (Break b : {Break::swap_layout, Break::position_plus_one}) {
    Tally t;
    compare_file(apply_, "rope/none.json", b, t);
    EXPECT_GT(t.failed, 0) << "a deliberately broken call passed every comparison";
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::cerr << "usage: posenc_llamacpp_honesty_tests PLUGIN.so\n";
    return 2;
  }
  plugin_path = argv[1];
  if (!fs::exists(plugin_path)) {
    std::cout << "SKIPPED: " << skip_reason() << "\n";
    return 77;  // CTest's SKIP_RETURN_CODE: a peer that cannot be had is never a pass or a fail
  }
  return RUN_ALL_TESTS();
}
