#pragma once
// Runs an implementation over the golden vectors and judges it by a profile (SPEC.md §5).
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "posenc/judge/implementation.hpp"
#include "posenc/judge/profiles.hpp"
#include "posenc/judge/properties.hpp"

namespace posenc::conformance {

struct RunOptions {
  std::filesystem::path vectors;
  std::string manifest_sha256;  // when set, vectors/MANIFEST must have this SHA-256 (the shipped set)
  Tolerance tolerance;
  // Only files some filter pattern matches (all when empty) and no exclude pattern does: a
  // file's path (family/variant.json, the .json optional), a family (rope) or a glob (rope/y*).
  std::vector<std::string> filter, exclude;
  std::vector<Format> formats{kAllFormats[0], kAllFormats[1], kAllFormats[2], kAllFormats[3]};
  // Only cases whose positions are all at most this in magnitude are judged; the others count
  // as beyond_max_position (a user serving 128k context asks for 131072).
  std::optional<double> max_position;
};

struct Worst {
  double value = 0;
  std::int64_t tc_id = 0;
  std::string where;  // format, element and inputs of the worst case
};

// The worst margin (error / bound, SPEC.md section 9) of a file's valid cases: > 1 is a fail.
// A check that failed without values to measure (a crash, a refusal of valid parameters, a
// wrong number of values) has an infinite margin and no element.
struct Margin {
  double value = 0;
  std::int64_t tc_id = 0;               // 0: nothing judged
  std::optional<std::int64_t> element;  // index in the case's outputs
  Format format = Format::f64;
  std::optional<double> position;  // max |p| of the case (every axis, both sides); none without
};

// The worst scaled error of the valid cases at one |position| in one format: what the HTML
// report plots against position. bound is the tightest positive bound of the elements there
// (0: none, e.g. under `exact`, which asks for the very bits).
struct PositionError {
  double position = 0;  // max |p| over the case's positions (every axis, both sides of a dot)
  Format format = Format::f64;
  double worst_scaled = 0;
  double bound = 0;
};

// One failed check: its case in one format, and the test group it belongs to.
struct Failure {
  std::int64_t group = 0;     // index of the test group in its file
  std::string group_comment;  // the group's comment (its parameters in words)
  std::int64_t tc_id = 0;
  Format format = Format::f64;
  std::string message;  // what was wrong
};

// Counts are of checks: one vector case in one output format.
struct FileResult {
  std::string path;
  std::int64_t passed = 0, failed = 0, unsupported = 0;
  std::int64_t beyond_max_position = 0;  // checks not judged: a position past --max-position
  Margin worst_margin;                    // over every format
  std::map<Format, Margin> margin_by_format;
  // Per format with judged valid cases that have positions: the largest |position| P such that
  // every judged valid case with all positions at most P passes; nullopt when one at the
  // smallest judged position fails.
  std::map<Format, std::optional<double>> accurate_up_to;
  Worst worst_scaled, worst_ulp;
  std::vector<Failure> failures;  // every one, in file order
  std::vector<PositionError> by_position;  // sorted by position, then format
};

struct RunReport {
  std::string implementation;
  Tolerance tolerance;  // the run's, with the working formats the implementation declares
  std::string replay;  // the command that reruns this check (with the properties' seed)
  std::vector<FileResult> files;
  std::vector<PropertyResult> properties;
  std::int64_t passed() const;
  std::int64_t failed() const;
  std::int64_t unsupported() const;
  std::int64_t beyond_max_position() const;
  bool conformant() const;
};

// t with, for each storage format t names no working format for, the one impl declares (if any):
// a working format the user gives (--working-format) wins over the implementation's.
Tolerance with_declared_working_formats(const Tolerance& t, const Implementation& impl);

// Checks MANIFEST first: a file missing from it, or whose hash differs, is refused
// (VectorFileError) before anything runs. progress(done, total) is called after each file.
RunReport run_vectors(Implementation& impl, const RunOptions& options,
                      const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace posenc::conformance
