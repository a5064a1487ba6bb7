#include "posenc/judge/file_selection.hpp"

#include <fnmatch.h>

#include <algorithm>

#include "posenc/errors.hpp"

namespace posenc::conformance {
namespace {

bool matches(const std::string& pattern, const std::string& path) {
  if (pattern.find_first_of("*?[") != std::string::npos) return fnmatch(pattern.c_str(), path.c_str(), 0) == 0;
  return path == pattern || path == pattern + ".json" || path.starts_with(pattern + "/");
}

bool any_match(const std::vector<std::string>& patterns, const std::string& path) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return matches(p, path); });
}

void require_each_matches(const std::vector<ManifestEntry>& manifest, const std::vector<std::string>& patterns,
                          const char* option) {
  for (const auto& p : patterns) {
    const bool found = std::any_of(manifest.begin(), manifest.end(), [&](const ManifestEntry& m) { return matches(p, m.path); });
    if (!found) {
      throw InvalidParameter(option, "'" + p + "'",
                             "a vector file (rope/none.json or rope/none), a family folder (rope) or a glob (rope/y*) "
                             "matching at least one file of the MANIFEST (posenc list shows them)");
    }
  }
}

}  // namespace

std::vector<ManifestEntry> select_files(const std::vector<ManifestEntry>& manifest, const std::vector<std::string>& include,
                                        const std::vector<std::string>& exclude) {
  require_each_matches(manifest, include, "--filter");
  require_each_matches(manifest, exclude, "--exclude");
  std::vector<ManifestEntry> selected;
  for (const auto& m : manifest) {
    if ((include.empty() || any_match(include, m.path)) && !any_match(exclude, m.path)) selected.push_back(m);
  }
  return selected;
}

}  // namespace posenc::conformance
