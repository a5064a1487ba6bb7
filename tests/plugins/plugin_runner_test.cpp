// The plugin adapter's kept child: a call that crashes, hangs, exits, prints or damages its
// buffers fails alone, named by its tcId, and the next call gets a fresh child that answers.
// Uses the hostile test plugins (tests/plugins): each misbehaves only in posenc_rope_apply on
// valid parameters, so sinusoidal tables and invalid RoPE parameters are good calls.
#include <gtest/gtest.h>

#include <string>

#include "posenc/adapters/plugin.hpp"

namespace {

using namespace posenc;
using namespace posenc::conformance;

std::string plugin(const std::string& name) { return std::string(POSENC_TEST_PLUGINS_DIR) + "/posenc_test_plugin_" + name + ".so"; }

VectorGroup rope_group(std::int64_t head_dim) {
  VectorGroup g;
  g.type = CaseType::rope_rotate;
  RopeParams p;
  p.head_dim = head_dim;
  p.rotary_dim = head_dim;
  g.params = p;
  VectorCase c;
  c.tc_id = 7;
  c.position = {3};
  c.x = std::vector<double>(static_cast<std::size_t>(head_dim), 0.5);
  g.tests = {c};
  return g;
}

VectorGroup sinusoidal_group() {
  VectorGroup g;
  g.type = CaseType::sinusoidal_row;
  SinusoidalParams p;
  p.d_model = 4;
  g.params = p;
  VectorCase c;
  c.tc_id = 8;
  c.position = {2};
  g.tests = {c};
  return g;
}

constexpr Format kF64[] = {Format::f64};
constexpr Format kF64F32[] = {Format::f64, Format::f32};

Outcome run_one(PluginImplementation& impl, const VectorGroup& g) { return impl.run(g, g.tests[0], kF64).at(0); }

// The misbehaving call fails with `needle` (and its tcId when the call did not answer); good
// calls before and after it answer.
void expect_fails_alone(const std::string& name, const std::string& needle, bool answered = false,
                        double timeout = 10.0) {
  SCOPED_TRACE(name);
  PluginImplementation impl(plugin(name), timeout);
  const VectorGroup rope = rope_group(4), invalid_rope = rope_group(3), table = sinusoidal_group();
  EXPECT_EQ(run_one(impl, table).status, Status::ok);
  const Outcome bad = run_one(impl, rope);
  EXPECT_EQ(bad.status, Status::failed);
  EXPECT_NE(bad.message.find(needle), std::string::npos) << bad.message;
  EXPECT_EQ(bad.message.find("tcId 7") != std::string::npos, !answered) << bad.message;
  const Outcome after = run_one(impl, table);
  EXPECT_EQ(after.status, Status::ok) << after.message;
  EXPECT_EQ(after.values.size(), 4u);
  EXPECT_EQ(run_one(impl, invalid_rope).status, Status::invalid);
  // Both formats of one case misbehave, each in a child of its own, each failing alike.
  const auto both = impl.run(rope, rope.tests[0], kF64F32);
  ASSERT_EQ(both.size(), 2u);
  for (const Outcome& o : both) EXPECT_NE(o.message.find(needle), std::string::npos) << o.message;
  EXPECT_EQ(run_one(impl, table).status, Status::ok);
}

TEST(PluginRunner, ACrashFailsOnlyItsCall) { expect_fails_alone("crash", "crashed with signal 6"); }
// 2 s: the timeout bounds the good calls too, and a child starting under ASan on a loaded machine
// has taken longer than 0.3 s.
TEST(PluginRunner, AHangFailsOnlyItsCall) { expect_fails_alone("hang", "did not return within 2", false, 2.0); }
TEST(PluginRunner, AnExitFailsOnlyItsCall) { expect_fails_alone("exit", "ended without answering"); }
TEST(PluginRunner, AFloodOfOutputFailsOnlyItsCall) {
  expect_fails_alone("print", "printed more than 1048576 bytes to stdout/stderr and was stopped");
}

// These fail by their reply; the child is replaced all the same.
TEST(PluginRunner, ADamagedInputFailsOnlyItsCall) { expect_fails_alone("write_input", "modified its input", true); }
TEST(PluginRunner, AnUnknownStatusFailsOnlyItsCall) { expect_fails_alone("bad_status", "unknown status 42", true); }

TEST(PluginRunner, AGoodPluginAnswersEveryCall) {
  PluginImplementation impl(plugin("double"));
  const VectorGroup rope = rope_group(4), table = sinusoidal_group();
  for (int i = 0; i < 50; ++i) {
    const auto outcomes = impl.run(rope, rope.tests[0], kF64F32);
    for (const Outcome& o : outcomes) EXPECT_EQ(o.status, Status::ok) << o.message;
    EXPECT_EQ(run_one(impl, table).status, Status::ok);
  }
}

TEST(PluginRunner, ALibraryThatCannotBeLoadedIsRefused) {
  try {
    PluginImplementation impl("/nonexistent/posenc_plugin.so");
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load"), std::string::npos) << e.what();
  }
}

}  // namespace
