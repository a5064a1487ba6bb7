// posenc_mutation_judge: judges one mutant's implementation (tests/mutation/implementation/, a
// shared library built against a mutated copy of one formula's file) on the shipped vectors, in
// process, through the suite's runner, exactly as any implementation is judged. The judge is
// this program, built from the unmutated sources; the mutant's library exports only its table of
// entry points (everything else in it is hidden), so neither's copy of a formula stands in for
// the other's. In process rather than through the C ABI (`posenc conform --impl`): the ABI
// derives dot products from rows, in process they are answered as such, which reaches the
// reference's own definitions of them.
//
//   posenc_mutation_judge --mutant LIB.so --vectors DIR [--profile standard] [--formats f32,f64]
//                         [--keep-going] FILE...
//
// Judges each FILE (family/variant.json) in order, one line per file, and stops after the first
// with a failed check unless --keep-going. Exit 0: every check passed (the mutant survives these
// files), 1: a check failed (the vectors kill it), 2: a usage or loading error.
#include <dlfcn.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "mutant.hpp"
#include "posenc/judge/runner.hpp"
#include "posenc/vectors/case_types.hpp"

namespace posenc::conformance {
namespace {

using mutation::Answer;

class MutantImplementation final : public Implementation {
 public:
  MutantImplementation(std::string name, const mutation::Families& f) : name_(std::move(name)), f_(f) {}
  std::string name() const override { return name_; }

  std::vector<Outcome> run(const VectorGroup& g, const VectorCase& c, std::span<const Format> formats) override {
    const Answer a = std::visit(
        overloaded{
            [&](const cases::SinusoidalRow& k) { return f_.sinusoidal_row(k.p, k.position); },
            [&](const cases::SinusoidalEmbed& k) { return f_.sinusoidal_embed(k.p, k.position, k.x); },
            [&](const cases::SinusoidalDot& k) { return f_.sinusoidal_dot(k.p, k.a, k.b); },
            [&](const cases::RopeFrequencies& k) { return f_.rope_frequencies(k.p); },
            [&](const cases::RopeTable& k) { return f_.rope_table(k.p, k.position); },
            [&](const cases::RopeRotate& k) { return f_.rope_rotate(k.p, k.position, k.x); },
            [&](const cases::RopeDot& k) { return f_.rope_dot(k.p, k.q_position, k.k_position, k.q, k.k); },
            [&](const cases::AlibiSlopes& k) { return f_.alibi_slopes(k.p); },
            [&](const cases::AlibiBias& k) { return f_.alibi_bias(k.p, k.head, k.query, k.key); },
            [&](const cases::LearnedLookup& k) { return f_.learned_lookup(k.p, k.table, k.position); },
            [&](const cases::Attention& k) { return f_.attention(k.p, k.in); },
        },
        typed_case(g, c));
    std::vector<Outcome> out;
    for (Format f : formats) {
      Outcome o;
      if (f != Format::f64 && f != Format::f32) {
        out.push_back(o);  // unsupported: the mutants answer in binary64 and binary32 only
        continue;
      }
      o.message = a.message;
      o.status = a.status == Answer::Status::ok        ? Status::ok
                 : a.status == Answer::Status::invalid ? Status::invalid
                                                       : Status::failed;
      // One rounding from long double to the format asked.
      for (long double v : a.values) {
        o.values.push_back(f == Format::f64 ? static_cast<double>(v) : static_cast<double>(static_cast<float>(v)));
      }
      out.push_back(std::move(o));
    }
    return out;
  }

 private:
  std::string name_;
  const mutation::Families& f_;
};

std::string first_failure(const FileResult& r) {
  if (r.failures.empty()) return "";
  const Failure& f = r.failures.front();
  std::ostringstream s;
  s << ", first failure: tcId " << f.tc_id << " " << to_string(f.format) << " (group " << f.group << ": "
    << f.group_comment << "): " << f.message;
  return s.str();
}

int run(int argc, char** argv) {
  std::string mutant, vectors;
  RunOptions options;
  options.tolerance.profile = Profile::standard;
  options.formats = {Format::f32};
  bool keep_going = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--mutant" && has_value) {
      mutant = argv[++i];
    } else if (a == "--vectors" && has_value) {
      vectors = argv[++i];
    } else if (a == "--profile" && has_value) {
      options.tolerance.profile = parse_profile(argv[++i]);
    } else if (a == "--formats" && has_value) {
      options.formats.clear();
      std::stringstream list(argv[++i]);
      for (std::string f; std::getline(list, f, ',');) options.formats.push_back(parse_format(f));
    } else if (a == "--keep-going") {
      keep_going = true;
    } else if (!a.empty() && a[0] != '-') {
      files.push_back(a);
    } else {
      std::cerr << "posenc_mutation_judge: unknown or incomplete option " << a << "\n";
      return 2;
    }
  }
  if (mutant.empty() || vectors.empty() || files.empty()) {
    std::cerr << "usage: posenc_mutation_judge --mutant LIB.so --vectors DIR [--profile P] [--formats f32,f64] "
                 "[--keep-going] FILE...\n";
    return 2;
  }
  void* library = dlopen(mutant.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::cerr << "posenc_mutation_judge: cannot load " << mutant << ": " << dlerror() << "\n";
    return 2;
  }
  using Query = const mutation::Families* (*)();
  const auto query = reinterpret_cast<Query>(dlsym(library, "posenc_mutant_families"));
  if (!query) {
    std::cerr << "posenc_mutation_judge: " << mutant << " exports no posenc_mutant_families\n";
    return 2;
  }
  MutantImplementation impl(mutant, *query());
  options.vectors = vectors;
  options.accuracy = options.validation = true;
  int status = 0;
  for (const auto& file : files) {
    options.filter = {file};
    const RunReport report = run_vectors(impl, options);
    for (const auto& r : report.files) {
      std::cout << r.path << ": " << r.passed() << " passed, " << r.failed() << " failed" << first_failure(r) << "\n";
      if (r.failed() > 0) status = 1;
    }
    if (report.files.empty()) {
      std::cerr << "posenc_mutation_judge: no vector file " << file << "\n";
      return 2;
    }
    if (status != 0 && !keep_going) break;
  }
  return status;
}

}  // namespace
}  // namespace posenc::conformance

int main(int argc, char** argv) {
  try {
    return posenc::conformance::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "posenc_mutation_judge: " << e.what() << "\n";
    return 2;
  }
}
