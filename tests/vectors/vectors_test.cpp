// The shipped golden vectors and their loader: every file loads, writes back to the same bytes
// (so the loader reads every field), agrees with the reference and with vectors/MANIFEST; and a
// malformed file is refused with an error naming the file, the tcId and the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <iostream>
#include <random>

#include "posenc/vectors/expected.hpp"
#include "posenc/vectors/json_reader.hpp"
#include "posenc/vectors/json_writer.hpp"
#include "posenc/vectors/manifest.hpp"
#include "posenc/vectors/vector_json.hpp"

namespace posenc::conformance {
namespace {

const std::filesystem::path kVectors = POSENC_VECTORS_DIR;

std::string read(const std::filesystem::path& p) { return read_bytes(p); }

std::vector<ManifestEntry> manifest() { return read_manifest(kVectors); }

TEST(Vectors, EveryFileLoadsAndWritesBackToTheSameBytes) {
  auto entries = manifest();
  ASSERT_EQ(entries.size(), 28u);
  std::int64_t total = 0;
  for (const auto& e : entries) {
    SCOPED_TRACE(e.path);
    const std::string text = read(kVectors / e.path);
    VectorFile f = parse_vector_file(text, e.path, tensors_beside(kVectors / e.path));
    EXPECT_EQ(f.number_of_tests(), e.cases);
    EXPECT_EQ(f.relative_path(), e.path);
    EXPECT_EQ(write_vector_file(f), text);
    if (f.has_tensors()) {
      EXPECT_EQ(write_tensor_file(f), read(kVectors / f.family / f.tensors_name()));
    }
    total += e.cases;
  }
  EXPECT_GE(total, 3000);
}

// Calls fn(path, file, group, case) for every case of every shipped vector file.
template <class F>
void for_each_case(F&& fn) {
  for (const auto& e : manifest()) {
    const VectorFile f = load_vector_file(kVectors / e.path);
    for (const auto& g : f.groups) {
      for (const auto& c : g.tests) fn(e.path, f, g, c);
    }
  }
}

TEST(Vectors, ExpectedValuesAreTheReferencesAndInvalidCasesAreRefused) {
  std::int64_t valid = 0, invalid = 0;
  for_each_case([&](const std::string& path, const VectorFile&, const VectorGroup& g, const VectorCase& c) {
    SCOPED_TRACE(path + " tcId " + std::to_string(c.tc_id));
    if (c.valid) {
      ++valid;
      VectorCase recomputed = c;
      fill_expected(g, recomputed);
      EXPECT_EQ(recomputed.expected, c.expected);
      EXPECT_EQ(recomputed.attention, c.attention);  // an attention case's bound ingredients too
      for (double x : c.x) EXPECT_TRUE(exact_bits(g.input_format, x).has_value()) << "input not exact in format";
    } else {
      ++invalid;
      try {
        evaluate_reference(g, c);
        ADD_FAILURE() << "accepted";
      } catch (const InvalidParameter& err) {
        EXPECT_EQ(err.parameter(), c.error);
      }
    }
  });
  EXPECT_GT(valid, 2900);
  EXPECT_GE(invalid, 40);
}

TEST(Vectors, EveryUsedFlagIsExplained) {
  for_each_case([](const std::string& path, const VectorFile& f, const VectorGroup&, const VectorCase& c) {
    for (const auto& flag : c.flags) EXPECT_TRUE(f.notes.count(flag)) << path << ": " << flag;
  });
}

std::string format_names(const std::vector<Format>& formats) {
  std::string s;
  for (Format f : formats) s += (s.empty() ? "" : ", ") + std::string(to_string(f));
  return s;
}

bool has_flag(const VectorCase& c, std::string_view flag) {
  return std::find(c.flags.begin(), c.flags.end(), flag) != c.flags.end();
}

// Every valid case is judged in a format narrower than f64 (its inputs are exact there, SPEC.md
// section 3), unless it is flagged F64Only, and an F64Only case is judged in f64 alone;
// FormatSubset marks exactly the cases judged in some formats but not all four.
TEST(Formats, EveryValidCaseIsJudgedInANarrowFormatUnlessFlaggedF64Only) {
  std::int64_t valid = 0, f64_only = 0;
  for_each_case([&](const std::string& path, const VectorFile&, const VectorGroup& g, const VectorCase& c) {
    if (!c.valid) return;
    ++valid;
    const auto judged = judged_formats(g, c);
    const std::string where = path + " tcId " + std::to_string(c.tc_id) + " (" + c.comment + ")";
    if (judged.size() == 1) ++f64_only;
    EXPECT_EQ(judged.size() == 1, has_flag(c, kF64OnlyFlag))
        << where << ": judged in " << format_names(judged) << ", flagged F64Only: " << has_flag(c, kF64OnlyFlag);
    EXPECT_EQ(judged.size() > 1 && judged.size() < std::size(kAllFormats), has_flag(c, "FormatSubset"))
        << where << ": judged in " << format_names(judged) << ", flagged FormatSubset: " << has_flag(c, "FormatSubset");
  });
  EXPECT_GT(valid, 0);
  std::cout << valid << " valid cases, " << f64_only << " flagged F64Only\n";
}

// A small valid file to corrupt.
std::string sample() { return read(kVectors / "alibi/invalid.json"); }

void expect_refused(const std::string& text, const std::string& message_part) {
  try {
    parse_vector_file(text, "vectors/alibi/invalid.json");
    ADD_FAILURE() << "accepted; expected: " << message_part;
  } catch (const VectorFileError& e) {
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
  }
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(Vectors, MalformedFilesAreRefusedWithFileTcIdAndField) {
  const std::string ok = sample();
  ASSERT_NO_THROW(parse_vector_file(ok, "x"));
  expect_refused(ok.substr(0, ok.size() / 2), "vectors/alibi/invalid.json: not valid JSON");
  expect_refused(replace(ok, "\"tcId\": 2,", "\"tcId\": 1,"), "tcId 1: field 'tcId': duplicate tcId");
  expect_refused(replace(ok, "\"numberOfTests\": 5", "\"numberOfTests\": 6"),
                 "field 'numberOfTests': declares 6 tests, the file has 5");
  expect_refused(replace(ok, "\"version\": 1", "\"version\": 2"), "field 'version': unsupported version 2");
  expect_refused(replace(ok, "\"queryPosition\": \"3\"", "\"queryPosition\": 3"),
                 "tcId 2: field 'queryPosition': expected a string");
  expect_refused(replace(ok, "\"queryPosition\": \"3\"", "\"queryPosition\": \"3.5\""),
                 "tcId 2: field 'queryPosition': expected a decimal integer string");
  expect_refused(replace(ok, "\"mode\": \"causal\"", "\"mode\": \"bidirectional\""),
                 "field 'testGroups[0].params.mode': invalid alibi.mode = 'bidirectional'");
  expect_refused(replace(ok, "\"type\": \"alibi_slopes\"", "\"type\": \"rope_table\""),
                 "field 'testGroups[0].type': 'rope_table' is not a alibi type");
  expect_refused(replace(ok, "\"result\": \"invalid\"", "\"result\": \"maybe\""),
                 "tcId 1: field 'result': expected 'valid' or 'invalid'");
  expect_refused(replace(ok, "\"head\": 8,", "\"head\": 8, \"tolerance\": 1,"), "tcId 2: field 'tolerance': unknown field");
  // A key given twice is refused, not read as one of its values.
  expect_refused(replace(ok, "\"head\": 8,", "\"head\": 8, \"head\": 9,"), "tcId 2: field 'head': appears twice");
  expect_refused(replace(ok, "\"mode\": \"causal\"", "\"mode\": \"causal\", \"mode\": \"causal\""),
                 "field 'testGroups[0].params.mode': appears twice");
  expect_refused(replace(ok, "\"error\": \"alibi.n_heads\"", "\"erorr\": \"alibi.n_heads\""), "tcId 1: field 'erorr'");
}

TEST(Vectors, MalformedExpectedValuesAreRefused) {
  const std::string ok = read(kVectors / "alibi/slopes.json");
  // The slope of a single head is 2^-8.
  expect_refused(replace(ok, "\"f32\": [\"0x1p-8\"", "\"f32\": [\"0.00390625\""),
                 "tcId 1: field 'expected.f32[0]': expected a C99 hex float string");
  expect_refused(replace(ok, "\"bf16\": [\"0x1p-8\"", "\"bf16\": [\"0x1.001p-8\""),
                 "tcId 1: field 'expected.bf16[0]': '0x1.001p-8' is not exactly representable in bf16");
  expect_refused(replace(ok, "\"f16\": [\"0x1p-8\"]", "\"f16\": [\"0x1p-8\", \"0x1p-8\"]"),
                 "tcId 1: field 'expected.f16': has 2 values, 'exact' has 1");
}

// The reader's exact shortcut for hex floats must give strtod's double, bit for bit: on random
// doubles of every binade as posenc writes them, and on texts posenc does not write (long or
// uppercase digits, a leading digit above 1, subnormals, huge exponents), where it must defer.
TEST(Vectors, HexFloatsReadAsStrtodReadsThem) {
  const std::string file = "test";
  const json_io::Location at{&file, std::nullopt, "x"};
  auto read = [&](const std::string& text) {
    const json_io::JsonDocument document("\"" + text + "\"", file);
    return json_io::read_hex_double(document.root(), at);
  };
  auto expect_as_strtod = [&](const std::string& text) {
    const double want = std::strtod(text.c_str(), nullptr);
    const double got = read(text);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want)) << text;
  };
  std::mt19937_64 random(7);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::bit_cast<double>(random());
    if (std::isfinite(v)) expect_as_strtod(json_io::hex_double(v));
  }
  for (const char* text : {"0x0p+0", "-0x0p+0", "0x1p+0", "0x1.8p-1", "0x1.fffffffffffffp+1023", "0x1p-1022",
                           "0x0.0000000000001p-1022", "0x1.fffffffffffff8p+0", "0x1.00000000000008p+0",
                           "0x1.0000000000000800001p+0", "0x3.fffffffffffffp+0", "0xf.ffffffffffffp-4", "0x1.ABCDEFp+3",
                           "0x1p-1074", "0x1.8p-1074", "0x1.1p-1075", "0x0.8p+1", "-0x1.921fb54442d18p+1"}) {
    expect_as_strtod(text);
  }
  // Values binary64 cannot hold are errors, not the zero or infinity strtod returns.
  for (const char* text : {"0x1p-1075", "0x1p-1075000", "0x1p+1024", "0x1p+99999999999"}) {
    EXPECT_THROW(read(text), VectorFileError) << text;
  }
}

}  // namespace
}  // namespace posenc::conformance
