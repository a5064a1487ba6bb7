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

// The parts of a verdict (SPEC.md section 9): accuracy (the valid cases), parameter validation
// (the invalid cases) and the property checks. The overall verdict needs every part selected.
enum class Part { accuracy, validation, properties };
inline constexpr Part kAllParts[] = {Part::accuracy, Part::validation, Part::properties};
std::string_view to_string(Part p);
// "accuracy", "validation" or "properties"; anything else: InvalidParameter naming `option`.
Part parse_part(std::string_view s, const std::string& option);

std::string_view to_string(NotJudged why);         // "no entry point", "bound vacuous", ...
std::string_view json_name(NotJudged why);          // "noEntryPoint", "boundVacuous", ...
inline constexpr NotJudged kAllNotJudged[] = {NotJudged::no_entry_point, NotJudged::refused,
                                              NotJudged::not_representable, NotJudged::bound_vacuous,
                                              NotJudged::beyond_max_position};

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
  // Whether the user named the formats (--formats) and files (--filter): each one named and
  // judged nowhere makes the run not conformant. The default (all) does not.
  bool formats_asked = false;
  bool files_asked = false;
  bool accuracy = true, validation = true;  // the parts whose cases run (--checks)
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

// The worst errors of the valid cases' judged elements at one |position| in one format. The HTML
// report plots worst_margin (error / bound of one element, so > 1 fails) against position.
// bound is the tightest positive bound of the elements there (0: none, e.g. under `exact`,
// which asks for the very bits).
struct PositionError {
  double position = 0;  // max |p| over the case's positions (every axis, both sides of a dot)
  Format format = Format::f64;
  double worst_scaled = 0;
  double bound = 0;
  double worst_margin = 0;
};

// One failed check: its case in one format, and the test group it belongs to.
struct Failure {
  std::int64_t group = 0;     // index of the test group in its file
  std::string group_comment;  // the group's comment (its parameters in words)
  std::int64_t tc_id = 0;
  Format format = Format::f64;
  std::string message;  // what was wrong
};

struct Counts {
  std::int64_t passed = 0, failed = 0;
  // Of those, the attention checks judged on O alone: the implementation gave no L (SPEC.md
  // sections 7 and 8), which is then not judged.
  std::int64_t without_lse = 0;
  std::int64_t judged() const { return passed + failed; }
};

// One part's checks (one case in one format) of a file or a run: judged per format, and not
// judged per reason and format.
struct PartCounts {
  std::map<Format, Counts> judged;
  std::map<NotJudged, std::map<Format, std::int64_t>> not_judged;
  std::int64_t passed() const;
  std::int64_t failed() const;
  std::int64_t not_judged_total() const;
  std::int64_t not_judged_for(NotJudged why) const;
  std::int64_t without_lse() const;  // judged checks of attention on O alone (Counts::without_lse)
  void add(const PartCounts& other);
};

// The accurate context in one output format (SPEC.md section 9): the largest |position| P such
// that every judged check (a case in the format) with all positions <= P passes. It ends at the
// first failure or at the last judged position, whichever comes first; a check whose bound is
// vacuous is not judged and does not end it.
struct AccurateContext {
  // Why it ends: at a failing check, or at the last judged position (nothing beyond is judged:
  // the vectors end there, or every check beyond has a vacuous bound or is beyond --max-position).
  enum class End { failure, last_judged_position };
  std::optional<double> up_to;     // P; nothing when a check at the smallest judged position fails
  std::optional<double> fails_at;  // the smallest |position| of a failing check
  std::int64_t bound_vacuous = 0;  // checks at |position| <= P not judged for a vacuous bound
  End end() const { return fails_at ? End::failure : End::last_judged_position; }
  bool operator==(const AccurateContext&) const = default;
};

// What the checks of one format at one |position| came to: the accurate context's input.
struct ChecksAtPosition {
  std::int64_t judged = 0, failed = 0, bound_vacuous = 0;
};
// The accurate context of checks tallied per |position|; nothing when none was judged.
std::optional<AccurateContext> accurate_context(const std::map<double, ChecksAtPosition>& at);

// Counts are of checks: one vector case in one output format.
struct FileResult {
  std::string path;
  PartCounts accuracy, validation;  // the valid cases, the invalid cases
  std::int64_t passed() const { return accuracy.passed() + validation.passed(); }
  std::int64_t failed() const { return accuracy.failed() + validation.failed(); }
  std::int64_t not_judged() const { return accuracy.not_judged_total() + validation.not_judged_total(); }
  Margin worst_margin;                    // over every format
  std::map<Format, Margin> margin_by_format;
  // Per format with a judged valid check that has positions.
  std::map<Format, AccurateContext> accurate_context;
  Worst worst_scaled, worst_ulp;
  std::vector<Failure> failures;  // every one, in file order
  std::vector<PositionError> by_position;  // sorted by position, then format
};

// A part's verdict: whether it was checked, and if so why it is not conformant (nothing: it is).
struct PartVerdict {
  bool checked = false;
  std::vector<std::string> reasons;
  bool conformant() const { return !checked || reasons.empty(); }
};

struct RunReport {
  std::string implementation;
  Tolerance tolerance;  // the run's, with the working formats the implementation declares
  std::string replay;  // the command that reruns this check (with the properties' seed)
  std::vector<Part> checks{Part::accuracy, Part::validation, Part::properties};  // the parts selected
  std::vector<Format> asked_formats;  // formats the user named (empty: the default, not asked)
  bool files_asked = false;           // the user named the files (--filter)
  std::vector<FileResult> files;
  // Per format, over every file's checks together (a failure in any file ends it).
  std::map<Format, AccurateContext> accurate_context;
  std::vector<PropertyResult> properties;
  std::int64_t passed() const;
  std::int64_t failed() const;
  PartCounts part_counts(Part p) const;  // accuracy or validation over every file
  std::int64_t not_judged() const;
  bool checked(Part p) const;
  PartVerdict verdict(Part p) const;
  // A file (when files were asked for) or an asked format judged nowhere, with the reasons.
  std::vector<std::string> coverage_gaps() const;
  bool conformant() const;
};

// t with, for each storage format t names no working format for, the one impl declares (if any),
// and likewise attention's score and probability formats: a format the user gives
// (--working-format, --score-format, --probability-format) wins over the implementation's.
Tolerance with_declared_working_formats(const Tolerance& t, const Implementation& impl);
// 2,481: a count as the verdict lines print it.
std::string thousands(std::int64_t n);
// "bound vacuous 30, no entry point 12": the reasons that occur, in kAllNotJudged's order, or "".
std::string not_judged_reasons(const PartCounts& c);

// Why a run with these options does not put case c in format f, or nothing when it does: its
// inputs are not f values (the implementation could not even receive them), or its positions are
// beyond max_position. (The formats themselves are options.formats; the parts, accuracy/validation.)
std::optional<NotJudged> excluded_by_run(const RunOptions& options, const VectorGroup& g, const VectorCase& c, Format f);

// Checks MANIFEST first: a file missing from it, or whose hash differs, is refused
// (VectorFileError) before anything runs. progress(done, total) is called after each file.
RunReport run_vectors(Implementation& impl, const RunOptions& options,
                      const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace posenc::conformance
