#pragma once
// Which vector files a run judges: --filter and --exclude patterns over the MANIFEST's paths.
#include <string>
#include <vector>

#include "posenc/vectors/manifest.hpp"

namespace posenc::conformance {

// The entries some include pattern matches (all, when there is none) and no exclude pattern
// does. A pattern with * ? or [ is a glob over the whole path (rope/y* is rope/yarn.json); any
// other is a file's path with or without ".json" (it matches only that file) or a family folder
// (rope). A pattern that matches no listed file is refused (InvalidParameter naming it), so a
// misspelling never quietly judges less.
std::vector<ManifestEntry> select_files(const std::vector<ManifestEntry>& manifest, const std::vector<std::string>& include,
                                        const std::vector<std::string>& exclude);

}  // namespace posenc::conformance
