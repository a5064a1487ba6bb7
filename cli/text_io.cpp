#include "text_io.hpp"

#include <filesystem>
#include <fstream>

#include "posenc/errors.hpp"

namespace posenc::cli {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw Error("cannot write " + path);
}

std::string default_vectors_dir() {
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto installed = exe.parent_path().parent_path() / "share" / "posenc" / "vectors";
    if (std::filesystem::exists(installed / "MANIFEST", error)) return installed.string();
  }
  return POSENC_SOURCE_VECTORS;
}

std::string shipped_manifest_sha256() { return POSENC_SHIPPED_MANIFEST_SHA256; }

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_-+=.,:/@%") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (char ch : text) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

}  // namespace posenc::cli
