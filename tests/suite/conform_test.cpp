// The suite has teeth: each deliberately wrong implementation ("mutant") is rejected, and the
// check that caught it is named; correct implementations pass. Mutants here are in-process
// implementations built on the reference with one mistake each, plus a binary32 RoPE written the
// way Hugging Face and llama.cpp form angles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <bit>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "posenc/vectors/expected.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/adapters/reference.hpp"
#include "posenc/judge/case_judgement.hpp"
#include "posenc/judge/runner.hpp"
#include "posenc/reports/html.hpp"
#include "posenc/reports/json.hpp"
#include "posenc/reports/text.hpp"
#include "posenc/vectors/vector_json.hpp"

namespace posenc::conformance {
namespace {

const std::filesystem::path kVectors = POSENC_VECTORS_DIR;

// While one lives, reference_values keeps the last case's values (Mutant::run: one case, every
// format). Nothing outlives it.
struct OneCase {
  struct Memo {
    CaseType type;
    VectorCase c;
    std::vector<Rounded> values;
  };
  static inline thread_local std::optional<Memo> memo;
  static inline thread_local bool active = false;
  OneCase() { active = true; }
  ~OneCase() { active = false, memo.reset(); }
  OneCase(const OneCase&) = delete;
  OneCase& operator=(const OneCase&) = delete;
};

// An implementation defined by a function of (group, case) returning the values in binary64
// (rounded by the adapter to each requested format), or a status.
class Mutant final : public Implementation {
 public:
  using Fn = std::function<Outcome(const VectorGroup&, const VectorCase&, Format)>;
  Mutant(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  std::vector<Outcome> run(const VectorGroup& g, const VectorCase& c, std::span<const Format> formats) override {
    const OneCase scope;
    std::vector<Outcome> out;
    for (Format f : formats) out.push_back(fn_(g, c, f));
    return out;
  }

 private:
  std::string name_;
  Fn fn_;
};

// The reference's values for a (possibly altered) group and case, computed once per case for all
// the formats Mutant::run asks for: only their rounding depends on the format, and the reference
// at multiprecision is what these runs spend their time on, once per format without this. Every mutant
// alters a group or case the same way whatever the format, so within one Mutant::run the case and
// the group's type identify the values; the memo is cleared when the run ends.
std::vector<Rounded> reference_values(const VectorGroup& g, const VectorCase& c) {
  if (OneCase::memo && OneCase::memo->type == g.type && OneCase::memo->c == c) return OneCase::memo->values;
  std::vector<Rounded> values = evaluate_reference(g, c);
  if (OneCase::active) OneCase::memo = OneCase::Memo{g.type, c, values};
  return values;
}

// The reference's answer for a (possibly altered) group, in format f.
Outcome reference_with(const VectorGroup& g, const VectorCase& c, Format f) {
  Outcome o;
  try {
    for (const auto& r : reference_values(g, c)) o.values.push_back(r.as_double(f));
    o.status = Status::ok;
  } catch (const InvalidParameter& e) {
    o.status = Status::invalid;
    o.message = e.what();
  }
  return o;
}

// The reference with its RoPE parameters altered by `change` (other families untouched).
Mutant::Fn rope_altered(std::function<void(RopeParams&)> change) {
  return [change](const VectorGroup& g, const VectorCase& c, Format f) {
    VectorGroup altered = g;
    if (auto* p = std::get_if<RopeParams>(&altered.params)) change(*p);
    return reference_with(altered, c, f);
  };
}

RunReport run(Implementation& impl, Profile profile, const std::string& filter) {
  RunOptions o;
  o.vectors = kVectors;
  o.tolerance.profile = profile;
  if (!filter.empty()) o.filter = {filter};
  return run_vectors(impl, o);
}

// A failure with a measured error has a margin above 1, and the file's worst margin is at least
// that: the margin column never shows a fail as within its bound.
void expect_margins_match_failures(const RunReport& r) {
  for (const auto& f : r.files) {
    for (const auto& why : f.failures) {
      if (why.message.find("(margin ") == std::string::npos) continue;
      EXPECT_GT(f.worst_margin.value, 1) << f.path << " tcId " << why.tc_id << ": " << why.message;
      EXPECT_GT(f.margin_by_format.at(why.format).value, 1) << f.path << " " << to_string(why.format);
    }
  }
}

// The report must fail, and its first failure message must contain `caught_by`.
RunReport expect_rejected(Implementation& impl, Profile profile, const std::string& filter, const std::string& caught_by) {
  const RunReport r = run(impl, profile, filter);
  for (const auto& f : r.files) {
    std::cout << "  " << impl.name() << ", " << to_string(profile) << ", " << f.path << ": worst scaled error "
              << f.worst_scaled.value << " (tcId " << f.worst_scaled.tc_id << " " << f.worst_scaled.where << ")\n";
  }
  EXPECT_FALSE(r.conformant()) << impl.name() << " passed " << filter;
  std::string failures;
  for (const auto& f : r.files) {
    for (const auto& why : f.failures) failures += f.path + ": tcId " + std::to_string(why.tc_id) + " " + why.message + "\n";
  }
  EXPECT_NE(failures.find(caught_by), std::string::npos) << impl.name() << ":\n" << failures;
  expect_margins_match_failures(r);
  return r;
}

TEST(Conform, ReferencePassesExactOnEveryVector) {
  ReferenceImplementation reference;
  const RunReport r = run(reference, Profile::exact, "");
  EXPECT_TRUE(r.conformant());
  EXPECT_EQ(r.failed(), 0);
  // Every case in every format its inputs are exact in (f32, bf16, f16 checks need such inputs).
  std::int64_t cases = 0;
  for (const auto& m : read_manifest(kVectors)) cases += m.cases;
  EXPECT_EQ(r.passed() + r.not_judged(), cases * 4);
  EXPECT_GT(r.passed(), 10000);
}

TEST(Conform, OneUlpOffFailsExactButPassesStrict) {
  Mutant off("one ulp off", [](const VectorGroup& g, const VectorCase& c, Format f) {
    Outcome o = reference_with(g, c, f);
    if (o.status == Status::ok && f == Format::f64 && !o.values.empty() && o.values[0] != 0 &&
        std::isfinite(o.values[0])) {
      o.values[0] = std::nextafter(o.values[0], INFINITY);
    }
    return o;
  });
  expect_rejected(off, Profile::exact, "rope/llama3", "element 0");
  EXPECT_TRUE(run(off, Profile::strict, "rope/llama3").conformant());
}

TEST(Conform, SwappedLayoutIsRejected) {
  Mutant swapped("half and interleaved swapped", rope_altered([](RopeParams& p) {
    p.layout = p.layout == RopeLayout::half ? RopeLayout::interleaved : RopeLayout::half;
  }));
  expect_rejected(swapped, Profile::standard, "rope/none", "scaled error");
}

TEST(Conform, PositionOffByOneIsRejected) {
  Mutant off_by_one("positions off by one", [](const VectorGroup& g, const VectorCase& c, Format f) {
    VectorCase shifted = c;
    for (auto& p : shifted.position) p += 1;
    return reference_with(g, shifted, f);
  });
  expect_rejected(off_by_one, Profile::standard, "rope/none", "scaled error");
}

TEST(Conform, YarnWithoutAttentionFactorIsRejected) {
  Mutant no_mscale("yarn without its attention factor", rope_altered([](RopeParams& p) {
    if (p.scaling.kind == RopeScalingKind::yarn) {
      p.scaling.mscale.reset();
      p.scaling.mscale_all_dim.reset();
      p.scaling.attention_factor = 1.0;
    }
  }));
  expect_rejected(no_mscale, Profile::standard, "rope/yarn", "scaled error");
}

TEST(Conform, PartialRotaryThatRotatesTheTailIsRejected) {
  Mutant whole("partial rotary rotating the tail", [](const VectorGroup& g, const VectorCase& c, Format f) {
    VectorGroup altered = g;
    auto& p = std::get<RopeParams>(altered.params);
    if (g.type != CaseType::rope_rotate) return Outcome{Status::unsupported, {}, ""};
    // Rotate every dimension with the frequencies of the rotary span repeated.
    RopeParams full = p;
    full.rotary_dim = p.head_dim;
    altered.params = full;
    return reference_with(altered, c, f);
  });
  expect_rejected(whole, Profile::standard, "rope/partial", "scaled error");
}

TEST(Conform, AcceptingInvalidParametersIsRejected) {
  Mutant lenient("accepts anything", [](const VectorGroup& g, const VectorCase& c, Format f) {
    Outcome o = reference_with(g, c, f);
    if (o.status == Status::invalid) o = Outcome{Status::ok, std::vector<double>(1, 0.0), ""};
    return o;
  });
  expect_rejected(lenient, Profile::standard, "*/invalid.json", "accepted invalid parameters");
  // A learned table that clamps out-of-range positions instead of refusing them.
  Mutant clamping("learned table clamps", [](const VectorGroup& g, const VectorCase& c, Format f) {
    VectorCase clamped = c;
    const auto& p = std::get<LearnedParams>(g.params);
    if (p.max_positions > 0) clamped.position[0] = std::clamp<std::int64_t>(c.position[0], 0, p.max_positions - 1);
    return reference_with(g, clamped, f);
  });
  expect_rejected(clamping, Profile::standard, "learned", "accepted invalid parameters (expected an error on learned.position)");
}

TEST(Conform, Tensor2TensorFrequenciesReportedAsPaperAreRejected) {
  Mutant t2t("tensor2tensor frequencies for paper", [](const VectorGroup& g, const VectorCase& c, Format f) {
    VectorGroup altered = g;
    if (auto* p = std::get_if<SinusoidalParams>(&altered.params)) p->frequencies = SinusoidalFrequencies::tensor2tensor;
    return reference_with(altered, c, f);
  });
  expect_rejected(t2t, Profile::standard, "sinusoidal/paper", "scaled error");
}

TEST(Conform, AlibiSlopesAsIfAPowerOfTwoAreRejected) {
  Mutant pow2("alibi slopes 2^(-8(h+1)/n) for every n", [](const VectorGroup& g, const VectorCase& c, Format f) {
    const auto& p = std::get<AlibiParams>(g.params);
    if (g.type != CaseType::alibi_slopes || p.n_heads < 1) return reference_with(g, c, f);
    Outcome o{Status::ok, {}, ""};
    for (std::int64_t h = 0; h < p.n_heads; ++h) {
      o.values.push_back(std::exp2(-8.0 * static_cast<double>(h + 1) / static_cast<double>(p.n_heads)));
    }
    return o;
  });
  expect_rejected(pow2, Profile::standard, "alibi/slopes", "scaled error");
}

// RoPE the way binary32 framework code does it: inv_freq and the angle in float.
//   hf:       inv_freq = 1 / base^(2i/d) in float, angle = float(pos) * inv_freq (Hugging Face)
//   llamacpp: theta = pos; theta *= base^(-2/d) per pair, in float (llama.cpp's iterative theta)
//   bf16:     the HF angle rounded to bfloat16
enum class AngleStyle { hf, llamacpp, bf16 };

Mutant float_rope(AngleStyle style, std::string name) {
  return Mutant(std::move(name), [style](const VectorGroup& g, const VectorCase& c, Format f) -> Outcome {
    const auto* p = std::get_if<RopeParams>(&g.params);
    if (g.type != CaseType::rope_rotate || !p || p->scaling.kind != RopeScalingKind::none ||
        p->partial != PartialRotary::standard || !p->mrope_section.empty() || !c.valid || f != Format::f32) {
      return {Status::unsupported, {}, ""};
    }
    // binary32 storage: inputs that binary32 cannot hold are not this implementation's to take.
    for (double x : c.x) {
      if (!exact_bits(Format::f32, x)) return {Status::unsupported, {}, "input not representable in f32"};
    }
    std::vector<float> y(c.x.begin(), c.x.end());
    const float pos = static_cast<float>(c.position[0]);
    const float dim = static_cast<float>(p->rotary_dim);
    const float step = std::pow(static_cast<float>(p->base), -2.0f / dim);
    float theta = pos;
    for (std::int64_t i = 0; i < p->rotary_dim / 2; ++i) {
      float angle = 0;
      if (style == AngleStyle::llamacpp) {
        angle = theta;
        theta *= step;
      } else {
        const float inv_freq = 1.0f / std::pow(static_cast<float>(p->base), static_cast<float>(2 * i) / dim);
        angle = pos * inv_freq;
        if (style == AngleStyle::bf16) {
          // Round to bfloat16 (round to nearest even on the float's bits).
          std::uint32_t b = std::bit_cast<std::uint32_t>(angle);
          b = (b + 0x7fff + ((b >> 16) & 1)) & 0xffff0000u;
          angle = std::bit_cast<float>(b);
        }
      }
      if (p->inverse) angle = -angle;
      const float cs = std::cos(angle), sn = std::sin(angle);
      const auto a = static_cast<std::size_t>(p->pair_first(i)), b = static_cast<std::size_t>(p->pair_second(i));
      const float xa = y[a], xb = y[b];
      y[a] = xa * cs - xb * sn;
      y[b] = xa * sn + xb * cs;
    }
    return {Status::ok, std::vector<double>(y.begin(), y.end()), ""};
  });
}

TEST(Conform, Float32AnglesFailStrictAtLongContextButPassStandard) {
  Mutant hf = float_rope(AngleStyle::hf, "HF-style binary32 inv_freq and angle");
  expect_rejected(hf, Profile::strict, "rope/none", "position=16777217");
  const RunReport standard = run(hf, Profile::standard, "rope/none");
  std::ostringstream summary;
  print_summary(summary, standard);
  EXPECT_TRUE(standard.conformant()) << summary.str();
}

// Margins (error / bound) and the accurate context (SPEC.md section 9) of the HF-style binary32
// angles under strict: the worst margin is above 1 in f32, where they fail; the context ends at
// the first failure, the next judged position; --max-position at the accurate context makes the
// same run pass (ending at its last judged position) while that position fails it.
TEST(Conform, MarginAndAccurateContextOfFloat32Angles) {
  Mutant hf = float_rope(AngleStyle::hf, "HF-style binary32 inv_freq and angle");
  const RunReport strict = run(hf, Profile::strict, "rope/none");
  ASSERT_EQ(strict.files.size(), 1u);
  const FileResult& f = strict.files[0];
  EXPECT_GT(f.worst_margin.value, 1);
  EXPECT_EQ(f.worst_margin.format, Format::f32);
  ASSERT_TRUE(f.worst_margin.position.has_value());
  ASSERT_TRUE(f.worst_margin.element.has_value());
  ASSERT_EQ(f.margin_by_format.count(Format::f32), 1u);
  EXPECT_EQ(f.margin_by_format.at(Format::f32).value, f.worst_margin.value);
  // Only f32 was judged (the mutant answers nothing else).
  ASSERT_EQ(f.accurate_context.size(), 1u);
  const AccurateContext& context = f.accurate_context.at(Format::f32);
  const std::optional<double> up_to = context.up_to;
  ASSERT_TRUE(up_to.has_value());
  ASSERT_TRUE(context.fails_at.has_value());
  EXPECT_EQ(context.end(), AccurateContext::End::failure);
  EXPECT_GT(*context.fails_at, *up_to);
  EXPECT_EQ(context.bound_vacuous, 0);  // strict's constant bounds are vacuous nowhere here
  EXPECT_EQ(strict.accurate_context, f.accurate_context);  // one file: the run's is the file's
  std::cout << "  HF-style binary32 angles: worst margin " << f.worst_margin.value << " at position "
            << *f.worst_margin.position << ", strict up to position " << *up_to << "\n";
  // A binary32 angle's error, about 2|t| units of u s, exceeds strict's 6 once |t| passes ~3:
  // pair 0 (frequency 1) fails from position ~3 on, long before 64.
  EXPECT_LT(*up_to, 64);
  EXPECT_GE(*f.worst_margin.position, *up_to);
  // The JSON report carries both, and its reader gives them back.
  const RunReport back = parse_report_json(report_json(strict), "report");
  EXPECT_EQ(back.files[0].worst_margin.value, f.worst_margin.value);
  EXPECT_EQ(back.files[0].worst_margin.element, f.worst_margin.element);
  EXPECT_EQ(back.files[0].worst_margin.position, f.worst_margin.position);
  EXPECT_EQ(back.files[0].accurate_context, f.accurate_context);
  EXPECT_EQ(back.accurate_context, strict.accurate_context);
  EXPECT_EQ(back.files[0].margin_by_format.at(Format::f32).tc_id, f.margin_by_format.at(Format::f32).tc_id);

  RunOptions o;
  o.vectors = kVectors;
  o.tolerance.profile = Profile::strict;
  o.filter = {"rope/none"};
  o.max_position = *up_to;
  const RunReport short_context = run_vectors(hf, o);
  EXPECT_TRUE(short_context.conformant());
  EXPECT_GT(short_context.part_counts(Part::accuracy).not_judged_for(NotJudged::beyond_max_position), 0);
  EXPECT_LE(short_context.files[0].worst_margin.value, 1);
  const AccurateContext& judged_short = short_context.files[0].accurate_context.at(Format::f32);
  EXPECT_EQ(judged_short.up_to, up_to);
  EXPECT_EQ(judged_short.end(), AccurateContext::End::last_judged_position);
  // Every check is counted once: judged or not judged (beyond --max-position among the reasons).
  EXPECT_EQ(short_context.passed() + short_context.failed() + short_context.not_judged(),
            strict.passed() + strict.failed() + strict.not_judged());
  double next = 0;  // the smallest judged position beyond up_to
  for (const auto& e : f.by_position) {
    if (e.format == Format::f32 && e.position > *up_to && (next == 0 || e.position < next)) next = e.position;
  }
  ASSERT_GT(next, *up_to);
  EXPECT_EQ(next, *context.fails_at);
  o.max_position = next;
  EXPECT_FALSE(run_vectors(hf, o).conformant());
}

// Under standard the same angles pass: every margin at most 1, accurate up to the last judged
// position, past which standard's bound is vacuous in f32 (SPEC.md section 5: (6 + 2|ln w|)|t|
// >= 2/u at w = 1 once |t| > 2^22.5) and the checks are not judged, none failed; checks not
// judged below it do not end it, they are counted.
TEST(Conform, MarginOfAPassIsAtMostOne) {
  Mutant hf = float_rope(AngleStyle::hf, "HF-style binary32 inv_freq and angle");
  const RunReport standard = run(hf, Profile::standard, "rope/none");
  ASSERT_TRUE(standard.conformant());
  const FileResult& f = standard.files[0];
  EXPECT_GT(f.worst_margin.value, 0);
  EXPECT_LE(f.worst_margin.value, 1);
  const AccurateContext& context = f.accurate_context.at(Format::f32);
  const auto up_to = context.up_to;
  ASSERT_TRUE(up_to.has_value());
  EXPECT_EQ(context.end(), AccurateContext::End::last_judged_position);
  EXPECT_FALSE(context.fails_at.has_value());
  EXPECT_GE(*up_to, 1 << 22);
  EXPECT_LT(*up_to, 1 << 24);
  double last_judged = 0;  // errorByPosition has a point at every position with a judged check
  for (const auto& e : f.by_position) last_judged = std::max(last_judged, e.position);
  EXPECT_EQ(*up_to, last_judged);
  EXPECT_EQ(f.failed(), 0);
  // Checks beyond it are not judged for a vacuous bound (tests/plugins/accurate_context_test.sh
  // has them below it too, which do not end it).
  EXPECT_GT(f.accuracy.not_judged_for(NotJudged::bound_vacuous), context.bound_vacuous);
  std::ostringstream text;
  print_summary(text, standard);
  char margin[32];
  std::snprintf(margin, sizeof margin, "%.3g", f.worst_margin.value);  // as the text prints it
  const std::string line = "f32 margin " + std::string(margin) + ", standard up to position " +
                           std::to_string(static_cast<std::int64_t>(*up_to)) + " (last judged position" +
                           (context.bound_vacuous == 0 ? std::string(")")
                                                       : "; " + std::to_string(context.bound_vacuous) +
                                                             " checks not judged: bound vacuous)");
  EXPECT_NE(text.str().find(line), std::string::npos) << line << "\n" << text.str();
  EXPECT_NE(text.str().find("accurate context (every file): f32 standard up to position "), std::string::npos);
}

// The same implementation on the same vectors: under the looser standard its first failure is
// never at a smaller position than under strict (SPEC.md section 9), and for these binary32
// angles, which fail strict early and pass standard as far as it judges, its context is longer.
// Under strict the text says where it fails.
TEST(Conform, AccurateContextOfALooserProfileFailsNoSooner) {
  Mutant hf = float_rope(AngleStyle::hf, "HF-style binary32 inv_freq and angle");
  const RunReport strict = run(hf, Profile::strict, "rope/none"), standard = run(hf, Profile::standard, "rope/none");
  for (const auto& [f, tight] : strict.accurate_context) {
    ASSERT_EQ(standard.accurate_context.count(f), 1u) << to_string(f);
    const AccurateContext& loose = standard.accurate_context.at(f);
    EXPECT_TRUE(!loose.fails_at || (tight.fails_at && *loose.fails_at >= *tight.fails_at)) << to_string(f);
    EXPECT_GE(loose.up_to.value_or(-1), tight.up_to.value_or(-1)) << to_string(f);
    std::cout << "  " << to_string(f) << ": strict up to " << tight.up_to.value_or(-1) << ", standard up to "
              << loose.up_to.value_or(-1) << "\n";
  }
  std::ostringstream text;
  print_summary(text, strict);
  const AccurateContext& c = strict.accurate_context.at(Format::f32);
  const std::string words = "strict up to position " + std::to_string(static_cast<std::int64_t>(*c.up_to)) +
                            " (fails at position " + std::to_string(static_cast<std::int64_t>(*c.fails_at)) + ")";
  EXPECT_NE(text.str().find(words), std::string::npos) << words << "\n" << text.str();
}

// The report's reader refuses an accurate context whose parts disagree, or a run's that is not
// what its files' add up to.
TEST(Conform, AReportWithAnEditedAccurateContextIsRefused) {
  Mutant hf = float_rope(AngleStyle::hf, "HF-style binary32 inv_freq and angle");
  const std::string json = report_json(run(hf, Profile::strict, "rope/none"));
  auto edited = [&](const std::string& from, const std::string& to, std::size_t nth) {
    std::size_t at = json.find(from);
    for (std::size_t i = 0; i < nth && at != std::string::npos; ++i) at = json.find(from, at + 1);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? json : json.substr(0, at) + to + json.substr(at + from.size());
  };
  // The first "end" is the run's, the second its file's.
  for (std::size_t nth : {0u, 1u}) {
    try {
      parse_report_json(edited("\"end\": \"failure\"", "\"end\": \"lastJudgedPosition\"", nth), "edited.json");
      ADD_FAILURE() << "an edited end was read";
    } catch (const VectorFileError& e) {
      EXPECT_NE(std::string(e.what()).find("accurateContext"), std::string::npos) << e.what();
    }
  }
  // The run's failure moved further out (still above its upTo): its file says otherwise.
  const std::string key = "\"failsAt\": ";
  const std::size_t at = json.find(key) + key.size();
  const std::string moved = json.substr(0, at) + "1000000.0" + json.substr(json.find_first_of(",\n}", at));
  try {
    parse_report_json(moved, "edited.json");
    ADD_FAILURE() << "an edited run context was read";
  } catch (const VectorFileError& e) {
    EXPECT_NE(std::string(e.what()).find("accurateContext"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("first failure"), std::string::npos) << e.what();
  }
}

// A check not judged (bound vacuous) contributes no judged point (SPEC.md section 9): none of its
// elements enters the margins, the worst errors or errorByPosition, even those whose bounds still
// mean something. Binary32 angles under standard: at rope/nan.json's position 2^31 - 1 the rotated
// elements' bounds are vacuous and only NaNs copied through are left to compare, so the check there
// is not judged and no report may draw a point for it. Which checks are judged is decided here
// again, case by case, with the judge's per-case judgement (as `posenc serve` answers it).
TEST(Conform, ChecksNotJudgedContributeNoJudgedPoint) {
  Mutant hf = float_rope(AngleStyle::hf, "HF-style binary32 inv_freq and angle");
  RunOptions o;
  o.vectors = kVectors;
  o.tolerance.profile = Profile::standard;
  o.filter = {"rope/nan", "rope/none"};
  o.formats = {Format::f32};
  const RunReport r = run_vectors(hf, o);
  const Tolerance t = with_declared_working_formats(o.tolerance, hf);
  const auto manifest = read_checked_manifest(kVectors, "");
  const RunReport back = parse_report_json(report_json(r), "report");
  const std::string page = html_report({r});
  std::size_t positions_not_judged = 0;
  ASSERT_EQ(r.files.size(), 2u);
  for (std::size_t fi = 0; fi < r.files.size(); ++fi) {
    const FileResult& file = r.files[fi];
    const auto entry = std::find_if(manifest.begin(), manifest.end(), [&](const ManifestEntry& m) { return m.path == file.path; });
    ASSERT_NE(entry, manifest.end());
    const VectorFile vectors = load_listed_file(kVectors, *entry);
    std::map<double, bool> judged_at;  // |position| -> some check there was judged
    std::set<std::int64_t> not_judged;  // tcIds
    for (const auto& g : vectors.groups) {
      for (const auto& c : g.tests) {
        if (!c.valid || excluded_by_run(o, g, c, Format::f32)) continue;
        const Format f32 = Format::f32;
        const Outcome out = hf.run(g, c, std::span(&f32, 1)).at(0);
        const auto position = case_position(c);
        if (out.status != Status::ok || !position) continue;
        const CaseJudgement j = judge_values(g, c, element_specs(g, c), out.values, f32, t, out.derived);
        const bool judged = !(j.pass && j.any_vacuous);
        if (!judged) not_judged.insert(c.tc_id);
        judged_at[*position] = judged_at[*position] || judged;
      }
    }
    for (const auto& [position, judged] : judged_at) {
      if (judged) continue;
      ++positions_not_judged;
      std::cout << "  " << file.path << ": every check at position " << std::fixed << std::setprecision(0) << position
                << std::defaultfloat << " not judged (bound vacuous)\n";
    }
    // errorByPosition: only positions with a judged check, in the report, its reader and the page.
    for (const auto& e : file.by_position) {
      EXPECT_TRUE(judged_at.count(e.position) && judged_at.at(e.position))
          << file.path << ": a point at position " << e.position << " where no check was judged (margin "
          << e.worst_margin << ", bound " << e.bound << ")";
    }
    ASSERT_EQ(back.files[fi].by_position.size(), file.by_position.size()) << file.path;
    for (std::size_t k = 0; k < file.by_position.size(); ++k) {
      EXPECT_EQ(back.files[fi].by_position[k].position, file.by_position[k].position) << file.path;
    }
    const auto plot = page.find("data-file=\"" + file.path + "\"");
    ASSERT_NE(plot, std::string::npos) << file.path;
    const std::string svg = page.substr(plot, page.find("</svg>", plot) - plot);
    std::size_t circles = 0;
    for (auto at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) ++circles;
    EXPECT_EQ(circles, file.by_position.size()) << file.path << ": the page draws other points than the report";
    // The margins and worst errors come from judged checks alone.
    for (const std::int64_t id : {file.worst_margin.tc_id, file.margin_by_format.at(Format::f32).tc_id,
                                  file.worst_scaled.tc_id, file.worst_ulp.tc_id}) {
      EXPECT_EQ(not_judged.count(id), 0u) << file.path << ": tcId " << id << " was not judged";
    }
  }
  // The rule is exercised: rope/nan.json's position 2^31 - 1 among them.
  EXPECT_GT(positions_not_judged, 0u);
}

// Where standard's bound reaches the largest error an element can have (2 s for a
// rotated element), x returned unrotated passes it. Such checks are not judged, never passed:
// a mutant that leaves x unrotated from position 2^24 on has exactly the reference's passes,
// and what it got wrong is either failed (an element whose bound still means something) or
// counted as bound vacuous, in bf16 and f16 where it happens.
TEST(Conform, VacuousBoundsAreNotJudgedNeverPassed) {
  Mutant unrotated("x unrotated from position 2^24", [](const VectorGroup& g, const VectorCase& c, Format f) {
    const bool far = !c.position.empty() && std::any_of(c.position.begin(), c.position.end(), [](std::int64_t p) {
      return p >= (std::int64_t{1} << 24) || p <= -(std::int64_t{1} << 24);
    });
    if (g.type != CaseType::rope_rotate || !c.valid || !far) return reference_with(g, c, f);
    Outcome o{Status::ok, {}, ""};
    for (double x : c.x) o.values.push_back(to_double(f, exact_bits(f, x).value()));
    return o;
  });
  ReferenceImplementation reference;
  RunOptions o;
  o.vectors = kVectors;
  o.tolerance.profile = Profile::standard;
  o.filter = {"rope/none"};
  o.formats = {Format::bf16, Format::f16};
  const RunReport wrong = run_vectors(unrotated, o), right = run_vectors(reference, o);
  const PartCounts w = wrong.part_counts(Part::accuracy), r = right.part_counts(Part::accuracy);
  EXPECT_EQ(w.passed(), r.passed());
  EXPECT_EQ(r.failed(), 0);
  EXPECT_EQ(w.not_judged_for(NotJudged::bound_vacuous) + w.failed(), r.not_judged_for(NotJudged::bound_vacuous));
  EXPECT_GT(w.not_judged_for(NotJudged::bound_vacuous), 0);
  for (Format f : o.formats) EXPECT_GT(w.not_judged.at(NotJudged::bound_vacuous).at(f), 0) << to_string(f);
  // Under strict (a bound of 6 units) the same mutant is caught.
  o.tolerance.profile = Profile::strict;
  EXPECT_FALSE(run_vectors(unrotated, o).conformant());
}

// A format asked for (--formats) and judged nowhere makes the run not conformant, with
// the reason; the default (every format) does not, and the unsupported checks are split by why.
TEST(Conform, AFormatAskedForAndJudgedNowhereIsNotConformant) {
  Mutant f32_only("answers f32 only", [](const VectorGroup& g, const VectorCase& c, Format f) {
    if (f != Format::f32) return Outcome{Status::unsupported, {}, "f32 only", false, NotJudged::no_entry_point};
    return reference_with(g, c, f);
  });
  RunOptions o;
  o.vectors = kVectors;
  o.filter = {"alibi/slopes"};
  o.files_asked = true;
  EXPECT_TRUE(run_vectors(f32_only, o).conformant());
  o.formats = {Format::f32, Format::f16};
  o.formats_asked = true;
  const RunReport asked = run_vectors(f32_only, o);
  EXPECT_FALSE(asked.conformant());
  ASSERT_EQ(asked.coverage_gaps().size(), 1u);
  EXPECT_EQ(asked.coverage_gaps()[0].rfind("f16 asked for and judged nowhere (no entry point ", 0), 0u)
      << asked.coverage_gaps()[0];
  EXPECT_GT(asked.part_counts(Part::accuracy).not_judged_for(NotJudged::no_entry_point), 0);
  // A file asked for and judged nowhere.
  o.formats = {Format::f16};
  const RunReport nowhere = run_vectors(f32_only, o);
  const auto gaps = nowhere.coverage_gaps();
  EXPECT_NE(std::find_if(gaps.begin(), gaps.end(), [](const std::string& g) {
              return g.starts_with("alibi/slopes.json asked for and judged nowhere");
            }), gaps.end());
  // The JSON report carries the verdict's parts and reasons, and its reader recomputes them.
  const RunReport back = parse_report_json(report_json(asked), "report");
  EXPECT_EQ(back.coverage_gaps(), asked.coverage_gaps());
  EXPECT_FALSE(back.conformant());
}

TEST(Conform, IterativeThetaAndBf16AnglesAreRejected) {
  Mutant llamacpp = float_rope(AngleStyle::llamacpp, "llama.cpp-style iterative theta in binary32");
  expect_rejected(llamacpp, Profile::strict, "rope/none", "scaled error");
  Mutant bf16 = float_rope(AngleStyle::bf16, "angles rounded to bf16");
  expect_rejected(bf16, Profile::standard, "rope/none", "scaled error");
}

// SPEC.md section 5: `standard` covers a frequency formed per pair (one pow or exp each), not a
// recurrence theta_{i+1} = theta_i * s. llama.cpp's s = powf(10000, -2/128) is 0.576 u_f32 high
// and the error grows by that much per pair, past the allowance's 6 + 2|ln w_i| (which grows
// by 0.288 per pair at this base and head_dim): the recurrence fails `standard` here, by more
// than a rounding slip (margin above 1.2; about 1.5 from the powf error alone at pair 63).
TEST(Conform, IterativeThetaIsNotCoveredByStandard) {
  Mutant llamacpp = float_rope(AngleStyle::llamacpp, "llama.cpp-style iterative theta in binary32");
  Mutant only_128("iterative theta, head_dim 128, base 10000",
                  [&](const VectorGroup& g, const VectorCase& c, Format f) -> Outcome {
                    const auto* p = std::get_if<RopeParams>(&g.params);
                    if (!p || p->head_dim != 128 || p->rotary_dim != 128 || p->base != 10000) return {};
                    return llamacpp.run(g, c, std::span(&f, 1)).at(0);
                  });
  const RunReport r = expect_rejected(only_128, Profile::standard, "rope/none", "scaled error");
  ASSERT_EQ(r.files.size(), 1u);
  const Margin& m = r.files[0].worst_margin;
  std::cout << "  iterative theta at head_dim 128, base 10000: worst margin " << m.value << " (tcId " << m.tc_id
            << ", element " << m.element.value_or(-1) << ", position " << m.position.value_or(-1) << ")\n";
  EXPECT_GT(m.value, 1.2);
  EXPECT_EQ(m.format, Format::f32);
  // The per-pair way of forming the same angles in binary32 passes.
  Mutant hf = float_rope(AngleStyle::hf, "HF-style binary32 inv_freq and angle");
  EXPECT_TRUE(run(hf, Profile::standard, "rope/none").conformant());
}

// Mutants that are wrong at every position but 0: the reference with every position 0 (x
// unrotated, tables cos 1 and sin 0) and with the rotation's sign flipped. Neither may be
// CONFORMANT in any format under any profile, on the whole file or on its long-context cases
// alone (positions of at least 2^24: where `standard`'s allowance is largest, SPEC.md section 5).
struct WrongRotation {
  std::string name;
  Mutant::Fn fn;
};

std::vector<WrongRotation> wrong_rotations() {
  auto unrotated = [](const VectorGroup& g, const VectorCase& c, Format f) {
    VectorCase at_zero = c;
    for (auto& p : at_zero.position) p = 0;
    for (auto& p : at_zero.position_b) p = 0;
    return reference_with(g, at_zero, f);
  };
  return {{"unrotated (every position 0)", unrotated},
          {"sign-flipped rotation", rope_altered([](RopeParams& p) { p.inverse = !p.inverse; })}};
}

// fn on the cases with some |position| >= 2^24; the others unsupported.
Mutant::Fn long_context_only(Mutant::Fn fn) {
  return [fn](const VectorGroup& g, const VectorCase& c, Format f) -> Outcome {
    double largest = 0;
    for (auto p : c.position) largest = std::max(largest, std::fabs(static_cast<double>(p)));
    for (auto p : c.position_b) largest = std::max(largest, std::fabs(static_cast<double>(p)));
    if (largest < 0x1p24) return {Status::unsupported, {}, ""};
    return fn(g, c, f);
  };
}

// In every format: a failed check in it, and its worst margin above min_margin.
void expect_failed_in_every_format(const RunReport& r, const std::string& what, double min_margin) {
  EXPECT_FALSE(r.conformant()) << what;
  expect_margins_match_failures(r);
  ASSERT_EQ(r.files.size(), 1u) << what;
  const FileResult& file = r.files[0];
  for (Format f : kAllFormats) {
    const bool failed_in_f =
        std::any_of(file.failures.begin(), file.failures.end(), [&](const Failure& x) { return x.format == f; });
    EXPECT_TRUE(failed_in_f) << what << ": nothing failed in " << to_string(f);
    ASSERT_EQ(file.margin_by_format.count(f), 1u) << what << " in " << to_string(f);
    EXPECT_GT(file.margin_by_format.at(f).value, min_margin) << what << " in " << to_string(f);
  }
}

TEST(Conform, UnrotatedAndSignFlippedAreNeverConformant) {
  for (const auto& wrong : wrong_rotations()) {
    // The whole file under standard (the loosest profile: the others allow less). Wrong by a
    // rotation, not by a rounding slip: at least 10 times the bound somewhere in each format.
    Mutant whole(wrong.name, wrong.fn);
    expect_failed_in_every_format(run(whole, Profile::standard, "rope/none"), wrong.name, 10);
    Mutant long_only(wrong.name + ", long context only", long_context_only(wrong.fn));
    for (Profile profile : {Profile::exact, Profile::strict, Profile::standard}) {
      const RunReport r = run(long_only, profile, "rope/none");
      expect_failed_in_every_format(r, long_only.name() + " under " + std::string(to_string(profile)), 1);
      if (profile != Profile::standard) continue;
      for (const auto& [f, m] : r.files[0].margin_by_format) {
        std::cout << "  " << long_only.name() << ", standard, " << to_string(f) << ": worst margin " << m.value
                  << " (tcId " << m.tc_id << ")\n";
      }
    }
  }
}

TEST(Conform, PropertiesHoldForTheReferenceAndCatchAnOffByOne) {
  ReferenceImplementation reference;
  PropertyOptions o;
  o.cases = 50;
  for (const auto& p : run_properties(reference, o)) EXPECT_EQ(p.status, "passed") << p.name << ": " << p.counterexample;
  Mutant off_by_one("positions off by one", [](const VectorGroup& g, const VectorCase& c, Format f) {
    VectorCase shifted = c;
    for (auto& p : shifted.position) p += 1;
    return reference_with(g, shifted, f);
  });
  bool zero_rotation_failed = false;
  for (const auto& p : run_properties(off_by_one, o)) {
    if (p.name.rfind("rope_zero_rotation", 0) == 0) zero_rotation_failed = p.status == "failed";
  }
  EXPECT_TRUE(zero_rotation_failed);
}

// A property whose every case the implementation leaves unanswered is unsupported, never passed:
// the reference without attention answers the RoPE, sinusoidal and ALiBi properties and none of
// the attention ones.
TEST(Conform, AttentionPropertiesAreUnsupportedWithoutAttention) {
  Mutant no_attention("the reference without attention", [](const VectorGroup& g, const VectorCase& c, Format f) {
    if (g.type == CaseType::attention) return Outcome{};
    return reference_with(g, c, f);
  });
  PropertyOptions o;
  o.cases = 5;
  o.formats = {Format::f32};
  int attention = 0;
  for (const auto& p : run_properties(no_attention, o)) {
    const bool is_attention = p.name.rfind("attention_", 0) == 0 && p.name.rfind("attention_permutation", 0) != 0;
    if (is_attention) ++attention;
    EXPECT_EQ(p.status, is_attention ? "unsupported" : "passed") << p.name << ": " << p.counterexample;
  }
  EXPECT_EQ(attention, 6);
}

TEST(Conform, TamperedVectorsAreRefused) {
  // In this build's own folder: build/ and build-asan/ may run this test at the same time.
  const auto dir = std::filesystem::path(POSENC_TEST_SCRATCH_DIR) / "tampered_vectors";
  std::filesystem::remove_all(dir);
  std::filesystem::copy(kVectors, dir, std::filesystem::copy_options::recursive);
  {
    std::ofstream f(dir / "alibi/slopes.json", std::ios::app);
    f << " ";
  }
  ReferenceImplementation reference;
  RunOptions o;
  o.vectors = dir;
  try {
    run_vectors(reference, o);
    ADD_FAILURE() << "tampered file accepted";
  } catch (const VectorFileError& e) {
    EXPECT_NE(std::string(e.what()).find("alibi/slopes.json: SHA-256 differs from MANIFEST"), std::string::npos)
        << e.what();
  }
  std::filesystem::copy_file(kVectors / "alibi/slopes.json", dir / "alibi/slopes.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(kVectors / "alibi/slopes.json", dir / "alibi/extra.json");
  EXPECT_THROW(run_vectors(reference, o), VectorFileError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace posenc::conformance
