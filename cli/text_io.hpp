#pragma once
// The CLI's files (its outputs, the default vectors folder) and the command lines it prints for
// replaying a run.
#include <string>

namespace posenc::cli {

// Writes the whole text; a file that cannot be written is an error naming it.
void write_text(const std::string& path, const std::string& text);
// The vectors installed with this binary (BIN/../share/posenc/vectors, cmake --install) when
// they exist, else the source tree's vectors/ the binary was built from.
std::string default_vectors_dir();
// SHA-256 of the MANIFEST of the vectors this binary was built with (and installs).
std::string shipped_manifest_sha256();
// text as one POSIX shell word (quoted only when it needs to be).
std::string shell_quote(const std::string& text);

}  // namespace posenc::cli
