// Run-time selection of the instruction-set path: CPUID for what the CPU has, XGETBV for what
// the OS saves on a context switch (YMM for AVX2, ZMM and opmask state for AVX-512); and the
// cache sizes the store mode and the prefetch are chosen by.
#include <cpuid.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "kernels.hpp"
#include "posenc/errors.hpp"

namespace posenc::fast {
namespace {

constexpr std::array kNames{"scalar", "avx2", "avx512"};

std::uint64_t os_saved_state() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;  // no OSXSAVE
  std::uint32_t lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

struct Features {
  bool avx2 = false, avx512 = false;
};

Features detect() {
  Features f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool fma = c & (1u << 12), f16c = c & (1u << 29), avx = c & (1u << 28);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool avx2 = b & (1u << 5), avx512f = b & (1u << 16), avx512bw = b & (1u << 30), avx512vl = b & (1u << 31);
  const std::uint64_t xcr0 = os_saved_state();
  const bool ymm = (xcr0 & 0x6) == 0x6, zmm = (xcr0 & 0xe6) == 0xe6;
  f.avx2 = avx && avx2 && fma && f16c && ymm;
  const bool avx512 = avx512f && avx512bw && avx512vl && zmm;
#ifdef POSENC_AVX512_EMULATED  // test build (emulated/): the AVX-512 kernels compiled onto AVX2
  f.avx512 = f.avx2 || avx512;
#else
  f.avx512 = f.avx2 && avx512;
#endif
  return f;
}

const Features& features() {
  static const Features f = detect();
  return f;
}

// POSENC_ISA's value ("" when unset), read on the first call only: a function-local static is
// initialized once even when threads race to it, and later calls cost no getenv.
const std::string& posenc_isa_variable() {
  static const std::string value = [] {
    const char* v = std::getenv("POSENC_ISA");
    return std::string(v ? v : "");
  }();
  return value;
}

}  // namespace

std::string_view to_string(Isa isa) { return kNames[static_cast<std::size_t>(isa)]; }

Isa parse_isa(std::string_view s) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (s == kNames[i]) return static_cast<Isa>(i);
  }
  throw InvalidParameter("isa", "'" + std::string(s) + "'", "one of scalar, avx2, avx512");
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return true;
    case Isa::avx2:
      return features().avx2;
    case Isa::avx512:
      return features().avx512;
  }
  return false;
}

Isa best_isa() { return features().avx512 ? Isa::avx512 : features().avx2 ? Isa::avx2 : Isa::scalar; }

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (isa_supported(i)) out.push_back(i);
  }
  return out;
}

namespace {

// selected_isa's answer from POSENC_ISA (read once) and the CPU: the ISA, or its error thrown.
Isa resolve_isa() {
  const std::string& forced = posenc_isa_variable();
  if (forced.empty()) return best_isa();
  Isa isa;
  try {
    isa = parse_isa(forced);
  } catch (const InvalidParameter&) {
    throw InvalidParameter("POSENC_ISA", "'" + forced + "'", "one of scalar, avx2, avx512");
  }
  if (!isa_supported(isa)) {
    throw InvalidParameter("POSENC_ISA", forced, "a path this CPU and OS support (best here: " +
                                                     std::string(to_string(best_isa())) + ")");
  }
  return isa;
}

}  // namespace

// Resolved once: neither POSENC_ISA nor the CPU changes, and a call without Options::isa asks
// on every call (resolved each time, ~20 of a one-token call's ~1,200 instructions). A bad
// POSENC_ISA is not kept as an answer: each call resolves it again and throws its error.
Isa selected_isa() {
  static const std::optional<Isa> resolved = []() -> std::optional<Isa> {
    try {
      return resolve_isa();
    } catch (const InvalidParameter&) {
      return std::nullopt;
    }
  }();
  return resolved ? *resolved : resolve_isa();
}

namespace detail {
const Kernels& kernels(Isa isa) {
  if (!isa_supported(isa)) {
    throw InvalidParameter("isa", std::string(to_string(isa)), "a path this CPU and OS support");
  }
  switch (isa) {
    case Isa::avx2:
      return avx2_kernels();
    case Isa::avx512:
      return avx512_kernels();
    default:
      return scalar_kernels();
  }
}

namespace {

// cpu0's cache of one level from Linux's sysfs (as lscpu reads it), 0 if it lists none.
std::size_t sysfs_cache_bytes(long wanted_level) {
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size");
    long level = 0, s = 0;
    std::string unit;
    if (!(level_file >> level) || !(size_file >> s) || level != wanted_level) continue;
    size_file >> unit;  // "K" or "M", read separately from the number
    const long size = s * (unit == "M" ? 1 << 20 : unit == "K" ? 1 << 10 : 1);
    if (size > 0) return static_cast<std::size_t>(size);
  }
  return 0;
}

}  // namespace

// sysfs first: glibc's sysconf, the fallback, can report a VM's caches as the whole socket's
// (an L3 of 256 MiB where sysfs lists the core complex's 32 MiB).
std::size_t core_cache_bytes() {
  static const std::size_t bytes = [] {
    std::size_t size = sysfs_cache_bytes(2);
    const long from_sysconf = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (size == 0 && from_sysconf > 0) size = static_cast<std::size_t>(from_sysconf);
    return size > 0 ? size : std::size_t{1} << 20;
  }();
  return bytes;
}

namespace {

// Whether CPUID leaf 0 names this vendor ("AuthenticAMD", "GenuineIntel": EBX, EDX, ECX).
bool vendor_is(std::string_view name) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
  char vendor[12];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  return std::string_view(vendor, sizeof vendor) == name;
}

// The CPU family of an AMD CPU (CPUID leaf 1: base family, plus the extended family where the
// base is 0xF: 0x17 Zen 1 and 2, 0x19 Zen 3 and 4, 0x1A Zen 5); 0 on other vendors.
unsigned amd_family() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!vendor_is("AuthenticAMD") || !__get_cpuid(1, &a, &b, &c, &d)) return 0;
  const unsigned base = (a >> 8) & 0xf, extended = (a >> 20) & 0xff;
  return base == 0xf ? base + extended : base;
}

}  // namespace

std::size_t amd_l3_bytes() {
  static const std::size_t bytes = amd_family() != 0 ? sysfs_cache_bytes(3) : 0;
  return bytes;
}

namespace {
std::atomic<std::int64_t> forced_parts{0};

// The count force_parts set, else the CPU's choice.
std::int64_t forced_or(std::int64_t chosen) {
  const std::int64_t forced = forced_parts.load(std::memory_order_relaxed);
  return forced > 0 ? forced : chosen;
}
}  // namespace

void force_parts(std::int64_t parts) {
  if (parts < 0 || parts > kMaxParts) {
    throw InvalidParameter("parts", std::to_string(parts), "in [1, " + std::to_string(kMaxParts) + "], or 0 for the CPU's choice");
  }
  forced_parts.store(parts, std::memory_order_relaxed);
}

std::int64_t in_place_parts(DType d, bool beyond_caches) {
  static const bool zen3_4 = amd_family() == 0x19;
  return forced_or(zen3_4 && d != DType::bf16 && beyond_caches ? kMaxParts : 1);
}

std::int64_t streamed_parts(DType d) {
  static const bool intel = vendor_is("GenuineIntel");
  return forced_or(intel && d == DType::f32 ? kMaxParts : 1);
}

std::size_t streamed_parts_prefetch_bytes() {
  static const bool intel = vendor_is("GenuineIntel");
  return intel ? 1024 : 0;
}

std::size_t prefetch_distance_bytes(DType d, bool in_place) {
  static const bool zen3_4 = amd_family() == 0x19;
  if (!zen3_4) return 8192;
  return d == DType::f32 && in_place ? 1024 : 2048;
}
}  // namespace detail

}  // namespace posenc::fast
