#pragma once
// One interface for every implementation under test: the reference, each fast path, a plugin
// through the C ABI, or a results file. The suite asks for one vector case in one output format.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "posenc/vectors/vectors.hpp"

namespace posenc::conformance {

enum class Status {
  ok,           // values holds the outputs
  invalid,      // the implementation refused the parameters (expected for invalid cases)
  unsupported,  // the implementation does not offer this case, format or option: not a failure
  failed,       // it crashed, hung, corrupted memory or answered garbage: message says how
};

// Why a check (one case in one format) was not judged (SPEC.md section 9). The first three come
// from the implementation's answer (an unsupported Outcome), the last two from the suite.
enum class NotJudged {
  no_entry_point,     // the implementation has nothing for this case type or format
  refused,            // it has, but declined this case (a plugin's POSENC_UNSUPPORTED, a results entry so marked)
  not_representable,  // the case's inputs are not values of the format
  bound_vacuous,      // the bound reaches the largest error the element can have (SPEC.md section 5)
  beyond_max_position,
};

struct Outcome {
  Status status = Status::unsupported;
  // Outputs as doubles (exact for every format), in the case's element order. An attention
  // case's may be O alone, without L (its kernel forms none): L is then not judged.
  std::vector<double> values;
  std::string message;
  // The suite formed these values itself from the implementation's outputs (a dot product of
  // its rotated q and k): they cannot be bit-exact, so `exact` judges them by `strict` bounds.
  bool derived = false;
  // For an unsupported outcome: why.
  NotJudged why_unsupported = NotJudged::no_entry_point;
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  // Called once before any case with every vector file the MANIFEST lists (below the vectors
  // folder) and a loader of them (checked against the MANIFEST): an implementation that names
  // cases itself (a results file) refuses here, with a VectorFileError, any it names that do
  // not exist or cannot be judged as given, whatever the run's filter.
  virtual void check_cases(const std::vector<std::string>& paths,
                           const std::function<VectorFile(const std::string&)>& load) {
    (void)paths;
    (void)load;
  }
  // Called before the cases of each vector file (path below the vectors folder).
  virtual void begin_file(const std::string& path) { (void)path; }
  // One outcome per requested output format, in order.
  virtual std::vector<Outcome> run(const VectorGroup& group, const VectorCase& c, std::span<const Format> formats) = 0;
  // The format the implementation forms angles and frequencies in for outputs stored in
  // `storage`, when it declares one (SPEC.md section 5: `standard` counts its angle allowance
  // in that format's u); nothing: the default (default_working_format) or the user's choice.
  virtual std::optional<Format> working_format(Format storage) const {
    (void)storage;
    return std::nullopt;
  }
  // The format its attention arithmetic (dot products, softmax, P V) is done in for outputs stored
  // in `storage`, where it differs from working_format's (SPEC.md section 5, "Attention"): an
  // implementation may form angles in binary64 and attend in binary32. Nothing: working_format's.
  virtual std::optional<Format> attention_working_format(Format storage) const {
    (void)storage;
    return std::nullopt;
  }
  // Attention (SPEC.md section 5): the format the implementation declares it rounds the scores
  // and the softmax's probabilities to, for outputs stored in `storage`; nothing: not rounded
  // (kept in the working format), unless the user says otherwise.
  virtual std::optional<Format> score_format(Format storage) const {
    (void)storage;
    return std::nullopt;
  }
  virtual std::optional<Format> probability_format(Format storage) const {
    (void)storage;
    return std::nullopt;
  }
};

}  // namespace posenc::conformance
