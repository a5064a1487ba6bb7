#pragma once
// A memory of the last few values a costly pure function returned, by argument (one per thread
// where it is thread_local). The judge asks the reference for the same parameter set's
// frequencies or slopes for every case of a group and every format the case is judged in, and
// the reference plugin is asked each case once per format; certified multiprecision values are
// worth keeping.
#include <cstddef>
#include <deque>

namespace posenc {

template <class Key, class Value, std::size_t Kept>
class RecentValues {
 public:
  // The kept value for `key`, or compute(key) kept in place of the oldest. The reference stays
  // valid until Kept more distinct keys have been asked.
  template <class Compute>
  const Value& get(const Key& key, Compute compute) {
    for (const Entry& e : kept_) {
      if (e.key == key) return e.value;
    }
    if (kept_.size() == Kept) kept_.pop_front();
    kept_.push_back({key, compute(key)});
    return kept_.back().value;
  }

 private:
  struct Entry {
    Key key;
    Value value;
  };
  std::deque<Entry> kept_;
};

}  // namespace posenc
