#pragma once
// The per-ISA kernels behind the fast interface. Each path lives in its own folder and is
// compiled with its own target flags; the driver (rope.cpp, absolute.cpp) is shared.
#include <cstddef>
#include <cstdint>

#include "posenc/fast/fast.hpp"

namespace posenc::fast::detail {

// One token's heads of one tensor, rotated by one row of cosines and sines indexed by each pair's
// first element a (a = 2i interleaved, a = i half; interleaved rows hold each value twice, at a
// and a + 1, so that vectors load them directly):
//   pair (a, b) = (2i, 2i+1) interleaved or (i, i + span/2) half:
//   y[a] = x[a] c[a] - x[b] s[a],  y[b] = x[b] c[a] + x[a] s[a]
// each as one binary32 FMA of the product x[.] s[a] (rounded first) and x[.] c[a]. Elements
// from span to tail_end are copied when out differs from in. With `stream`, rows whose vector
// stores are all aligned are written with non-temporal stores (the caller fences). next_in is
// the input of the token rotated next (null if none; next_heads rows next_in_head_bytes apart):
// the rows prefetch_ahead rows later in that order are prefetched (0: none).
struct TokenRows {
  DType dtype;
  bool interleaved, stream;
  std::int64_t span, tail_end;
  const float *c, *s;
  const char* in;
  char* out;
  std::ptrdiff_t in_head_bytes, out_head_bytes;
  std::int64_t heads;
  const char* next_in;
  std::ptrdiff_t next_in_head_bytes;
  std::int64_t next_heads;
  std::int64_t prefetch_ahead;
};

// Consecutive tokens [0, tokens) of one tensor in one kernel call: token k is `first` with its
// input and output k token strides on and its row at rows[k] (cosines) and rows[k] + sines
// (first's c and s are token 0's); the token after the last is first's next_in (elements.hpp,
// token_of). (A kernel call per token would cost up to a fifth of the time: rope.cpp, kBlock.)
// Plain data: no member function, since an inline function of this header compiled into a path's
// translation unit is a shared (weak) definition, of which the linker keeps one for every path
// (elements.hpp; tests/fast/isa_objects_test.sh).
// With parts > 1 the run is that many runs of `tokens` tokens at once (parts of a thread's
// tokens, rope.cpp, rotate_parts), part p's token k p * in_part_bytes (out_part_bytes) after token
// k of part 0 and its row at rows[p * part_rows + k]; the vector paths rotate head h of every
// part's token k before head h + 1 of any (generic/rotate.hpp, rotate_in_turn), and before each
// head row prefetch into L1 the row part_prefetch_ahead rows later in its part's tokens of the
// run, if there is one (0: none; elements.hpp, heads_in_turn).
constexpr std::int64_t kMaxParts = 4;

struct TokenRun {
  TokenRows first;
  std::int64_t tokens;
  std::ptrdiff_t in_token_bytes, out_token_bytes;
  const float* const* rows;
  std::ptrdiff_t sines;
  std::int64_t parts = 1, part_rows = 0;
  std::ptrdiff_t in_part_bytes = 0, out_part_bytes = 0;
  std::int64_t part_prefetch_ahead = 0;
};

// Decode attention's unit of work (attention.cpp, attention_decode): one segment of the cache's
// keys, [key_begin, key_end), for KV heads [kv_begin, kv_end) and every new token and query head
// of those KV heads. It leaves, per (token, query head) row, the segment's partial softmax in
// `state` (generic/attend.hpp, AttendState): the running max m, the sum l of exp(s - m) and
// O = sum exp(s - m) v, unnormalized; l = 0 where the row sees none of the segment's keys.
// A row's partial softmax in AttendItem::state: m, l, then O from this float on (64-byte
// aligned, value_dim rounded up to 16).
constexpr std::int64_t kStateM = 0, kStateL = 1, kStateO = 16;

struct AttendItem {
  DType dtype;  // the cache's
  const char *k, *v;  // slot 0, KV head 0
  std::ptrdiff_t k_token_bytes, k_head_bytes, v_token_bytes, v_head_bytes;
  std::int64_t head_dim, value_dim;
  std::int64_t query_heads, group;  // group: query heads per KV head
  std::int64_t key_begin, key_end, kv_begin, kv_end;
  std::int64_t tokens;
  const std::int64_t* visible_end;  // per token: it sees keys [0, visible_end[t])
  // q' [tokens][query_heads][q_floats] in binary32, zero from head_dim to q_floats (a multiple of
  // 16: the dot products' lanes, generic/attend.hpp).
  const float* q;
  std::int64_t q_floats;
  float scale;
  // ALiBi (null without): -slope per query head, the first position axis of each token and of
  // each slot, and the mode (symmetric: |distance|).
  const float* negated_slopes;
  const std::int64_t *query_positions, *key_positions;
  bool symmetric;
  float* state;  // [tokens][query_heads][state_floats], this segment's
  std::int64_t state_floats;
  std::int64_t prefetch_keys;  // how far ahead the item's K and V rows are prefetched, in keys (0: none)
};

// The segments' partial softmaxes of each row merged in segment order (the same bits whatever
// the threads did): out = O / l (value_dim values, binary32) and lse = M + ln l.
struct AttendMerge {
  const float* state;  // [segments][rows][state_floats]
  std::int64_t segments, rows, state_floats, value_dim;
  float* out;  // [rows][out_floats]
  std::int64_t out_floats;
  float* lse;  // [rows]
};

struct Kernels {
  // s[i], c[i] = sin and cos of position[i] * (w_hi[i] + w_lo[i]): the angle formed as a
  // double-double (frequencies.hpp, angle), SLEEF's deterministic 3.5-ulp binary64 kernels
  // (finz u35, the same bits on every path) on its head, corrected by its tail.
  void (*sincos)(const double* position, const double* w_hi, const double* w_lo, double* s, double* c,
                 std::size_t n);
  void (*rotate)(const TokenRun& run);
  // The angle addition of the cos/sin rows (generic/angle_sum.hpp), into binary64 and binary32.
  void (*angle_sum)(const double* c0, const double* s0, const double* cy, const double* sy, std::size_t m, double* c,
                    double* s);
  void (*angle_sum_to_float)(const double* c0, const double* s0, const double* cy, const double* sy, std::size_t m,
                             float* c, float* s);
  // Decode attention (generic/attend.hpp): one work item, and the merge of the segments.
  void (*attend)(const AttendItem& item);
  void (*attend_merge)(const AttendMerge& merge);
};

const Kernels& scalar_kernels();
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
const Kernels& kernels(Isa isa);

// The level-2 cache's size in bytes, a core's own on the CPUs this path runs on (sysfs, else
// sysconf, else 1 MiB assumed).
std::size_t core_cache_bytes();
// On an AMD CPU, the L3 that sysfs lists for cpu0 (on Zen, its core complex's own), in bytes; 0
// on other CPUs or where sysfs lists none.
std::size_t amd_l3_bytes();
// How far ahead of the rotation its input rows are prefetched, in bytes, tuned per CPU (rope.cpp,
// prefetch_rows, says why and which bench cases measure it): on AMD family 19h (Zen 3 and 4) 1 KiB
// for f32 in place, else 2 KiB; 8 KiB on other CPUs.
std::size_t prefetch_distance_bytes(DType d, bool in_place);
// In how many parts at once (TokenRun::parts) a call rotates a thread's tokens, tuned per CPU
// (rope.cpp, rotate_parts, says why). In place: on AMD family 19h (Zen 3 and 4) kMaxParts for
// f32 and f16 beyond the caches, else 1. A streaming call not wholly in place: on Intel CPUs
// kMaxParts for f32, else 1. force_parts(n), n in [1, kMaxParts], makes it n for every call in
// place (but those whose rows are all kept) and every streaming call not, 0 undoes that:
// a test's switch, so that every machine runs both drivers (process-wide: not for concurrent
// callers).
std::int64_t in_place_parts(DType d, bool beyond_caches);
std::int64_t streamed_parts(DType d);
// How far ahead, in bytes, each part of a streaming call in parts (streamed_parts) prefetches its
// head rows into L1 (TokenRun::part_prefetch_ahead; rope.cpp, rotation, says why): 1 KiB on Intel
// CPUs, 0 (none) elsewhere.
std::size_t streamed_parts_prefetch_bytes();
void force_parts(std::int64_t parts);

}  // namespace posenc::fast::detail
