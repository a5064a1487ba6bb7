// The RoPE driver shared by every ISA path: validation, per-token cos/sin rows (kept across
// calls), threads, store mode and prefetch; the plan and the cache are plan.cpp's.
#include <xmmintrin.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels.hpp"
#include "rows.hpp"
#include "workers.hpp"
#include "posenc/errors.hpp"
#include "posenc/strided_view.hpp"

namespace posenc::fast {
namespace {

using detail::check_position;
using detail::kernel_row_floats;
using detail::kernels;
using detail::to_kernel_row;

// check_tensor's errors, out of line and cold, so that the check inlines into the call (as
// posenc/strided_view.hpp's: called, it took ~25 instructions of a one-token decode call's ~1,200).
[[noreturn, gnu::cold, gnu::noinline]] void refuse_tensor(const RopeTensor& t, const char* name) {
  if (!t.in || !t.out) throw InvalidParameter(std::string(name) + ".in/out", "null", "non-null pointers");
  throw InvalidParameter(std::string(name) + ".heads", std::to_string(t.heads), ">= 1, or 0 for the call's n_heads");
}

void check_tensor(const RopeTensor& t, const char* name, bool required) {
  if (!required && !t.in) return;
  if (!t.in || !t.out || t.heads < 0) [[unlikely]] refuse_tensor(t, name);
}

// A tensor's head count (RopeTensor::heads).
std::int64_t heads_of(const RopeTensor& t, std::int64_t n_heads) { return t.heads ? t.heads : n_heads; }

// The parameter names of one tensor, as the errors report them.
struct TensorNames {
  const char *in, *out, *in_token_stride, *in_head_stride, *out_token_stride, *out_head_stride;
};
constexpr TensorNames kQNames{"q.in", "q.out", "q.in_token_stride", "q.in_head_stride", "q.out_token_stride", "q.out_head_stride"};
constexpr TensorNames kKNames{"k.in", "k.out", "k.in_token_stride", "k.in_head_stride", "k.out_token_stride", "k.out_head_stride"};

// One tensor's views, checked (check_view), with their extents.
struct CheckedViews {
  StridedView in, out;
  std::size_t in_bytes, out_bytes;
  bool in_place;  // the input is the output: same buffer, same strides
};

CheckedViews check_views(DType d, std::int64_t n_tokens, std::int64_t heads, std::int64_t head_dim, const RopeTensor& t,
                         const TensorNames& names) {
  CheckedViews v{{names.in, t.in, n_tokens, heads, head_dim, t.in_token_stride, t.in_head_stride, size_of(d)},
                 {names.out, t.out, n_tokens, heads, head_dim, t.out_token_stride, t.out_head_stride, size_of(d)},
                 0, 0, t.in == t.out && t.in_token_stride == t.out_token_stride && t.in_head_stride == t.out_head_stride};
  if (v.in_place) {
    // The input is the output: the check of its view, a subset of the written view's, would
    // only repeat it (~60 instructions of a one-token call's ~1,150).
    v.in_bytes = v.out_bytes = check_view(v.out, names.out_token_stride, names.out_head_stride, true);
  } else {
    v.in_bytes = check_view(v.in, names.in_token_stride, names.in_head_stride, false);
    v.out_bytes = check_view(v.out, names.out_token_stride, names.out_head_stride, true);
    check_disjoint(v.in, v.in_bytes, v.out, v.out_bytes);
  }
  return v;
}

// Sizes, strides and aliasing of Q and K (SPEC: in place means the same buffer with the same
// strides; Q and K may share a fused buffer only as disjoint, identically strided rows). Each
// tensor's views are values, not entries of arrays indexed at run time, so that the compiler
// keeps them in registers: with the checks inline besides (posenc/strided_view.hpp), a one-token
// call of 1 head took ~57 ns instead of ~65 (AVX-512 Xeon VM, f32, out of place, 3 alternating
// processes).
void check_layout(DType d, std::int64_t n_tokens, std::int64_t n_heads, std::int64_t head_dim, const RopeTensor& q,
                  const RopeTensor& k) {
  const CheckedViews vq = check_views(d, n_tokens, heads_of(q, n_heads), head_dim, q, kQNames);
  if (!k.in) return;
  const CheckedViews vk = check_views(d, n_tokens, heads_of(k, n_heads), head_dim, k, kKNames);
  check_disjoint(vq.out, vq.out_bytes, vk.out, vk.out_bytes);
  // An input that is its output was just checked as that output.
  if (!vk.in_place) check_disjoint(vq.out, vq.out_bytes, vk.in, vk.in_bytes);
  if (!vq.in_place) check_disjoint(vk.out, vk.out_bytes, vq.in, vq.in_bytes);
}

// What every token's kernel calls share.
struct Rotation {
  const detail::Kernels& kernels;
  const RopePlan& plan;
  DType dtype;
  std::int64_t n_heads;  // of a tensor whose RopeTensor::heads is 0
  bool stream;  // out-of-place outputs with non-temporal stores
  std::int64_t prefetch_ahead;  // 0: none
  bool all_rows_kept;  // a row per token kept: Q rotated over all the tokens before K (rotate_tokens), unless in parts
  std::int64_t parts;  // of a thread's tokens rotated at once (rotate_parts), 1: none
  std::int64_t part_prefetch_ahead;  // rows, in parts (kernels.hpp, TokenRun), 0: none
};

// A prefetch distance of `bytes` in whole head rows, at least one; 0 bytes: none.
std::int64_t rows_ahead(const RopeParams& p, DType d, std::size_t bytes) {
  if (bytes == 0) return 0;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes) / (p.head_dim * static_cast<std::int64_t>(size_of(d))));
}

// How far ahead rows are prefetched (detail::prefetch_distance_bytes), in whole rows, at least
// one. Measured at shape B, 4096 tokens x 32 heads x 128, alternating rounds, median ms per call.
// AMD family 17h VM: 8 KiB the best of 2, 8, 16 and 32. Zen 3 VM (AMD family 19h model 1,
// AVX2), f32, 3 rounds, 2 KiB against 8 KiB: Q in place 3.91 against 4.25 (in-place scale 4.10),
// out of place 4.34 against 5.06-5.28 (non-temporal copy 4.10); Q of 32 heads and K of 8, 4.61
// against 5.22 in place, 5.48 against 6.03 out; Q and K of 32, 8.08 against 8.85 in place, 8.27
// against 9.30 out (1 KiB within the noise of 2). Zen 4 VM (family 19h): a flat rotation loop
// 4.2-5.4 with 8 KiB, 2 KiB neutral. Zen 5 VM (family 1Ah model 2, AVX-512), 7-9 rounds, 2 KiB
// against 8 KiB: Q and K of 32 out of place, f32 7.66 against 7.14, bf16 4.33 against 3.46
// (non-temporal copies of the same bytes 6.59 and 3.36); in place, f32 6.59 against 6.08, bf16
// 3.68 against 2.66; Q out of place 3.94 against 3.43; Q and K of 8 out of place 5.03 against
// 4.92, in place 4.24 against 4.20 (4 KiB: f32 as 8, bf16 4.08). Intel Xeon VM (AVX-512, 2 MiB
// L2), Q alone, f32, 3 rounds: out of place 5.92-6.03 against 5.67-5.98, in place 5.88-6.12
// against 5.58-5.71. Issue 19's Zen 3 round, the same Zen 3 VM, in one process, each round a
// batch at 1 KiB (or 4 KiB) beside a batch at 2 KiB on the same tensors (bench/paired.hpp), 31
// rounds, the median of 2 KiB's time over the other's in two processes: f32 in place, 1 KiB, Q
// 1.04 and 1.05, Q and 8 K heads 1.07 and 1.06, Q and K 1.06 and 1.05 (512 bytes: 0.97-1.04, 1.5
// KiB 1.02-1.04); f32 out of place, 1 KiB, 0.98-1.04; bf16, 1 KiB, 0.92-0.96 in place and
// 0.93-0.99 out; bf16, 4 KiB, 1.01-1.04 in place and 0.95-0.97 out. So f32 in place takes 1 KiB
// there (the call's mode is Q's). A rule of thumb this is not: a measured optimum of one CPU.
std::int64_t prefetch_rows(const RopeParams& p, DType d, bool in_place) {
  return rows_ahead(p, d, detail::prefetch_distance_bytes(d, in_place));
}

// Whether tensor x's outputs go by non-temporal stores: out of place in a streaming call.
bool streamed(const Rotation& r, const RopeTensor& x) { return r.stream && x.in != x.out; }

// Token t of tensor x.
struct TokenOf {
  const RopeTensor* x;
  std::int64_t t;
};

// Tokens [t, t + count) of tensor x as one kernel call's run (kernels.hpp, TokenRun), but for its
// rows (set_rows), prefetching from `next` (the token rotated after the last, x null if none).
detail::TokenRun run_of(const Rotation& r, const RopeTensor& x, std::int64_t t, std::int64_t count, TokenOf next,
                        std::int64_t parts = 1, std::int64_t part_tokens = 0, std::int64_t part_rows = 0) {
  const RopeParams& p = r.plan.params();
  const auto size = static_cast<std::ptrdiff_t>(size_of(r.dtype));
  const auto input = [size](const TokenOf& u) { return static_cast<const char*>(u.x->in) + u.t * u.x->in_token_stride * size; };
  const detail::TokenRows first{r.dtype, p.layout == RopeLayout::interleaved, streamed(r, x),
                                p.rotated_span(), p.head_dim, nullptr, nullptr,
                                input({&x, t}), static_cast<char*>(x.out) + t * x.out_token_stride * size,
                                x.in_head_stride * size, x.out_head_stride * size, heads_of(x, r.n_heads),
                                next.x ? input(next) : nullptr, next.x ? next.x->in_head_stride * size : 0,
                                next.x ? heads_of(*next.x, r.n_heads) : 0, r.prefetch_ahead};
  return {first, count, x.in_token_stride * size, x.out_token_stride * size, nullptr,
          static_cast<std::ptrdiff_t>(kernel_row_floats(r.plan) / 2), parts, part_rows,
          part_tokens * x.in_token_stride * size, part_tokens * x.out_token_stride * size,
          parts > 1 ? r.part_prefetch_ahead : 0};
}

// Token k of run rotated by the row at rows[k] (cosines; the sines run.sines on).
void set_rows(detail::TokenRun& run, const float* const* rows) {
  run.rows = rows;
  run.first.c = rows[0];
  run.first.s = rows[0] + run.sines;
}

void rotate_run(const Rotation& r, const RopeTensor& x, std::int64_t t, std::int64_t count, const float* const* rows,
                TokenOf next, std::int64_t parts = 1, std::int64_t part_tokens = 0, std::int64_t part_rows = 0) {
  detail::TokenRun run = run_of(r, x, t, count, next, parts, part_tokens, part_rows);
  set_rows(run, rows);
  r.kernels.rotate(run);
}

// Tokens [begin, end) in passes: the pass's Q tokens, then its K tokens, so that
// each tensor is read in long runs (alternating every token costs ~10% at DRAM bandwidth). rows(t,
// i) gives token t's row (its cosines; kernels.hpp, TokenRun), i = t - the pass's first token;
// the fused path computes it on the Q pass and keeps it for K's (all_rows_kept: a pass is as
// long as the rows kept). Before the passes, a thread's tokens may go in parts at once
// (rotate_parts; the rest, fewer than the parts, after). Within a pass each
// tensor's tokens go to the kernels in runs of kBlock: one call and one choice of kernel per run,
// not per token. A pass was a block of kBlock tokens until issue 19's Zen 3 round; a call whose
// rows are all kept (at most 512 tokens at head_dim 128) now takes one pass (if not in parts,
// which go block by block, Q's then K's). On a Zen 3 VM (AVX2),
// both builds loaded into one process and called in alternating batches on the same memory, 21
// rounds, median of the old build's time over the new one's, f32, 512 tokens x Q of 32 heads and
// K of 32: in place 1.11-1.27 (3 processes), out of place 1.10-1.15; with new positions every
// call (every row computed) 1.13 both; with K of 8, 1.02-1.06 and 1.01-1.03; Q alone 0.99-1.02.
// Passes of 512 tokens in the longer calls, the rows read back from the L3 on K's pass, measured
// no faster at 4096 tokens (0.95-1.03), so those keep passes of kBlock.
// The runs, measured before the passes: on a Zen 5 VM (AVX-512, f32, head_dim 128),
// in batches alternating with a baseline over the same memory in one process, 4 processes
// each, a call per token against a run per block: 512 tokens x 32 heads in place 0.74-0.79 of
// an in-place scale's speed to 0.79-0.84 (0.72-0.76 of a hand-written rotation loop's to
// 0.80-0.84), with 8 K heads 0.72-0.85 to 0.79-0.93; 4096 tokens in place 0.83-0.88 to
// 0.88-0.96, with 8 K heads 0.82-0.89 to 0.84-0.94; 16 tokens out of place in L2 0.76-0.81 of a
// hand-written loop's to 0.84-0.89, f16 0.59-0.63 to 0.73-0.74. The rows of a run are computed
// before it. Until issue 19's native Intel round, where the outputs were streamed, Q's tokens went
// one per run instead, their rows computed between them: on that Zen 5 VM, with runs of 16, 512
// tokens out of place took 0.95-0.96 of a non-temporal copy's speed (one per run 0.99-1.02). Since
// then the calls changed (rows kept across calls, passes, the fixed cost of a run), and on the
// Intel Xeon VM (CPUID family 6 model 207, AVX-512), f32 out of place (streamed), timer-sampled
// `perf record` of 512 tokens x 32 heads put 8.5% of the samples in building each token's run
// (its stores to the stack wait behind the non-temporal ones) and 3-5% more in the call per token
// around it. Runs of 16 against one per run there (one build switching between them, alternating
// batches), median of time over time (15-21 rounds): Q 0.95-0.97 at 512 tokens (rows kept),
// 0.93-0.95 at 4096 (rows computed per block), 0.97 at 512 tokens with new positions every call,
// 0.94 at 4096; Q and 8 K heads 0.99 and 0.93; Q and K 0.97 and 0.995. On the Zen 3 VM (AVX2),
// both builds in one process, one per run over runs of 16: 512 tokens of 32 heads 0.96-1.11 (4
// runs), of 32 and 32 1.19, 4096 tokens of 32 heads 1.05-1.07 (3 runs), of 32 and 8 1.01, of 32
// and 32 0.96. So every tensor's tokens now go in runs of kBlock. In place, Q's outputs are not
// streamed even in a streaming call (until issue 19's Zen 3 round they too went one per run
// there): on the Zen 3 VM,
// both builds loaded into one process and called in alternating batches on the same memory
// (median of the old build's time over the new one's, 21 rounds; 9 at 4096 tokens): 512 tokens in
// place of 32 heads 1.08, of 32 and 8 K heads 1.14, of 32 and 32 1.19; 4096 tokens of 32 heads
// 1.03, of 32 and 8 1.06; and on the Zen 5 VM 512 tokens in place in runs of 1 and 4 took
// 1.07-1.10 and 1.02-1.05 times as long as in runs of 16, and with the first 4, 8 or 16 KiB of a
// run's first token prefetched into L1 before its rows, 1.02-1.13, 1.07-1.09 and 1.36-1.51 times
// as long. (Before the runs, measured the same way with a call per token:
// all of a block's rows before its first token, 1.06-1.08 times as long; each token's
// successor's row before its rotation, 1.02-1.04; the token loop without its two divisions,
// 1.00-1.02; blocks of 64 tokens within the noise. And computing the next block's rows in pieces between head rows measured no
// faster on shape B.)
constexpr std::int64_t kBlock = 16;

// The rows a thread keeps through a call and after it (detail::KeptRows): every token's where the
// call's rotated spans, padded to lines, hold at most kKeptRowSpans values (512 tokens at head_dim
// 128: 256 KiB of rows in the half layout, 512 KiB interleaved; the layers of a forward pass
// then compute none after the first), else a block's. Not 4 MiB (every row of 4096 tokens at
// head_dim 128 kept, read back from memory by the next call instead of computed; passes and parts
// as at 512 KiB, when rows of either layout took 1 KiB): on the Zen 3 VM (AVX2), f32, shape B,
// the paired bench's ratios in 3 alternating runs of each build, in place Q 0.89-0.90 against
// 0.92-0.96, Q and 8 K heads 0.85-0.87 against 0.90-0.92, Q and K 0.88-0.94 against 0.81-0.98;
// out of place Q 0.85-0.89 against 0.82-0.86, the others within the noise.
constexpr std::uint64_t kKeptRowSpans = 512 * 128;
bool all_rows_kept(const RopePlan& plan, std::int64_t n_tokens) {
  // A product, not a 64-bit division per call; the first test bounds n_tokens by 2^16, so the
  // product cannot overflow for any span a plan has.
  const auto span = static_cast<std::uint64_t>(detail::line_padded(static_cast<std::size_t>(plan.params().rotated_span())));
  return static_cast<std::uint64_t>(n_tokens) <= kKeptRowSpans && static_cast<std::uint64_t>(n_tokens) * span <= kKeptRowSpans;
}

// Tokens [begin, begin + parts * per) as `parts` runs of `per` tokens at once (kernels.hpp,
// TokenRun::parts: head h of each part's token before head h + 1), in blocks of kBlock tokens per
// part: Q's run of the block, then K's. rows(t, i): token t's row, i its index among the block's
// tokens of every part. Where (Rotation::parts; detail::in_place_parts, streamed_parts): as one
// sequential stream leaves the memory idle much of the time there, in place beyond the caches
// of AMD family 19h, and in streaming calls (Options::stores, beyond the core's cache) not wholly
// in place on Intel CPUs (a tensor in place among them goes in the same parts, without streaming).
// In place: issue 19's second Zen 3 round (AMD family 19h model 1, AVX2), hand-written loops
// over 64 MiB in place, alternating batches: an in-place scale in 4 parts at once (a line of each
// in turn) 2.9-3.6 ms against 3.8-4.4 in one stream, a rotation loop 3.3-3.9 against 4.4-5.1 (4
// parts of 4 KiB in turn instead: as one stream). Both builds of the fast path in one process,
// alternating batches, 9-11 rounds, median of the one-part build's time over the 4-part build's,
// f32 half layout, in place, 4096 tokens: Q of 32 heads 1.22, 1.24, 1.22, 1.02 and 0.95 (5
// processes); Q and K of 8 1.18, 1.18, 0.97; Q and K of 32 1.19, 1.22; interleaved 1.25; f16
// 1.09; 2 threads 1.12; 2048 tokens 1.38. Not taken there: 2 parts (0.99), out of place
// (non-temporal stores from 4 places: 0.84-1.02, with or without the prefetch; from 2, without
// it, issue 19's sixth Zen 3 round, the paired bench's ratios to the copy in 3 alternating runs
// of each build, f32 at shape B: Q 0.68-0.72 against 0.82-0.87 in one part, Q and 8 K heads
// 0.73-0.78 against 0.82-0.88, Q and K 0.68-0.77 against 0.86-0.91), bf16 (Q and K of 32: 0.90;
// its split kernel's reordered rows per part cost more than the parts give), the prefetch within
// the parts (0.90).
// Out of place: issue 19's eighth round, on the Intel Xeon VM (CPUID family 6 model 207,
// AVX-512), one build switching between 1 and 2, 3 or 4 parts, alternating batches in one
// process, 31 rounds, median of the one-part time over the k-part time, f32 out of place
// (streamed), Q of 32 heads / Q and 8 K heads / Q and K of 32, half layout: 512 tokens, 4 parts
// 1.04 / 1.06 / 1.03 (2 parts 1.02 / 1.06 / 1.02); 4096 tokens 1.04 / 1.04 / 1.07 (2 parts
// 1.02 / 1.02 / 1.03); interleaved, 4 parts, 1.05 / 1.07 / 1.07 and 1.08 / 1.06 / 1.09; 2
// threads 1.00-1.04. Not taken there: bf16 (Q and K of 32 at 4096 tokens, 0.96-1.00 in 2, 3 or
// 4 parts) and f16 (0.96-1.02); the prefetch within the parts into L2 (8, 4 and 2 KiB ahead per
// part: the paired bench's out-of-place ratios 0.77-0.87, 0.82-0.92, 0.86-0.97, against 0.87-0.97
// without it). Into L1, 1 KiB ahead, it was taken in the thirteenth round (rotation).
template <class Rows>
void rotate_parts(const Rotation& r, std::int64_t begin, std::int64_t per, std::int64_t parts, const RopeTensor& q,
                  const RopeTensor& k, Rows& rows) {
  const float* block_rows[kBlock * detail::kMaxParts];
  for (std::int64_t b = 0; b < per; b += kBlock) {
    const std::int64_t e = std::min(per, b + kBlock);
    for (std::int64_t p = 0; p < parts; ++p) {
      for (std::int64_t t = b; t < e; ++t) block_rows[p * kBlock + t - b] = rows(begin + p * per + t, p * kBlock + t - b);
    }
    rotate_run(r, q, begin + b, e - b, block_rows, {}, parts, per, kBlock);
    if (k.in) rotate_run(r, k, begin + b, e - b, block_rows, {}, parts, per, kBlock);
  }
}

// The runs of one block of tokens [begin, end) (at most kBlock): Q's, prefetching K's first
// token, then K's, with the rows they read (rotate_block sets them).
// (No member initializers: set_block_runs sets what rotate_block reads, and a block's locals
// are not zeroed per call.)
struct BlockRuns {
  const detail::Kernels* kernels;
  detail::TokenRun q, k;
  bool has_k, stream;
  const float* rows[kBlock];
};

void set_block_runs(BlockRuns& b, const Rotation& r, const RopeTensor& q, const RopeTensor& k, std::int64_t begin,
                    std::int64_t end) {
  b.kernels = &r.kernels;
  b.q = run_of(r, q, begin, end - begin, k.in ? TokenOf{&k, begin} : TokenOf{});
  b.has_k = k.in != nullptr;
  if (b.has_k) b.k = run_of(r, k, begin, end - begin, {});
  b.stream = r.stream;
}

// One block's tokens [begin, end) (set_block_runs): their rows, then Q's run and K's. What the
// passes of rotate_tokens do for one block, without their loops. (A call of 1 token x 1 head,
// f32, out of place, on the AVX-512 Xeon VM: 54 ns against 60, 3 alternating processes; ~110 of
// its ~1,000 instructions, by callgrind on the AVX2 path.)
template <class Rows>
void rotate_block(BlockRuns& b, std::int64_t begin, std::int64_t end, Rows& rows) {
  for (std::int64_t t = begin; t < end; ++t) b.rows[t - begin] = rows(t, t - begin);
  set_rows(b.q, b.rows);
  b.kernels->rotate(b.q);
  if (b.has_k) {
    set_rows(b.k, b.rows);
    b.kernels->rotate(b.k);
  }
  if (b.stream) _mm_sfence();  // order the non-temporal stores before the caller reads
}

template <class Rows>
void rotate_tokens(const Rotation& r, std::int64_t begin, std::int64_t end, const RopeTensor& q, const RopeTensor& k,
                   Rows& rows) {
  if (begin < end && end - begin <= kBlock) {
    BlockRuns b;
    set_block_runs(b, r, q, k, begin, end);
    return rotate_block(b, begin, end, rows);
  }
  const float* run_rows[kBlock];
  if (r.parts > 1 && end - begin >= r.parts * kBlock) {
    const std::int64_t per = (end - begin) / r.parts;
    rotate_parts(r, begin, per, r.parts, q, k, rows);
    begin += r.parts * per;
  }
  const std::int64_t pass = r.all_rows_kept ? std::max(end - begin, kBlock) : kBlock;
  for (std::int64_t b = begin; b < end; b += pass) {
    const std::int64_t e = std::min(end, b + pass);
    const TokenOf after{e < end ? &q : nullptr, e};
    for (const RopeTensor* x : {&q, &k}) {
      if (!x->in) continue;
      const TokenOf last = x == &q && k.in ? TokenOf{&k, b} : after;
      for (std::int64_t t0 = b; t0 < e; t0 += kBlock) {
        const std::int64_t t1 = std::min(e, t0 + kBlock);
        for (std::int64_t t = t0; t < t1; ++t) run_rows[t - t0] = rows(t, t - b);
        rotate_run(r, *x, t0, t1 - t0, run_rows, t1 < e ? TokenOf{x, t1} : last);
      }
    }
  }
  if (r.stream) _mm_sfence();  // order the non-temporal stores before the caller reads
}

// The bytes of a call's outputs (as many as its inputs).
double call_bytes(DType d, std::int64_t n_tokens, std::int64_t n_heads, std::int64_t head_dim, const RopeTensor& q,
                  const RopeTensor& k) {
  const auto heads = static_cast<double>(heads_of(q, n_heads) + (k.in ? heads_of(k, n_heads) : 0));
  return static_cast<double>(n_tokens) * heads * static_cast<double>(head_dim) * static_cast<double>(size_of(d));
}

// Whether a call's tensors are taken to be beyond the core's own caches: its reads and writes
// (twice its output bytes) exceed the core's L2. Such a call prefetches its rows and, out of
// place, streams its outputs (Options::stores automatic): written with ordinary stores, each
// output line is first read for ownership and later written back, while non-temporal stores
// write it once. Before issue 19's AVX-512 runs the threshold was a quarter of the last-level
// cache, which a VM may report as the whole socket's: 260 MiB on that Xeon VM, where shape A's
// 8 MiB tensor then took ordinary stores and no prefetch. There (2 MiB L2), best of 40 batches,
// alternating runs, 1 tensor of T tokens x 32 heads x 128, f32: out of place, T = 64 (1 MiB
// out) 36-40 GB/s with either store; T = 128, 25 ordinary against 33 streamed; T = 256 and
// 512, 24-25 against 29-31; in place, the prefetch took T = 512 from 44-45 to 49 GB/s and T =
// 4096 from 38-41 to 46-47; 64 tokens x 40 heads out of place 37-38 GB/s streamed against 29-30
// with ordinary stores, the prefetch within the noise. On a Zen 4 with a 32 MiB L3 and 1 MiB
// L2, T = 512 ran 21 GB/s with ordinary stores against 37-39 streamed.
bool beyond_core_cache(double bytes) { return 2 * bytes > static_cast<double>(detail::core_cache_bytes()); }

bool streams(const Options& o, bool beyond_cache) {
  if (o.stores != Stores::automatic) return o.stores == Stores::streaming;
  return beyond_cache;
}

// Whether rows are prefetched: only beyond the core's caches (in them, a prefetch is a load slot
// taken from the rotation for nothing: one token x 40 heads in cache, AVX2, ~10% of the call),
// and on an AMD CPU only where the call's reads and writes exceed its L3 as well (the same test
// as beyond_core_cache's, one level up). Tokens x 32 heads x 128, f32, in place, alternating
// rounds, median us per call without and with the prefetch. Zen 3 VM (AMD family 19h model 1,
// 32 MiB L3, AVX2), 2 KiB ahead, 3 rounds: 512 tokens (8 MiB) 213 and 251 (an in-place scale
// 151), 1024 tokens 470 and 536, 512 tokens of Q and K 455 and 515, of Q and 8 K heads 269 and
// 322; but 2048 tokens (32 MiB) 1983 and 1550, 4096 tokens 5150 and 4390 (out of place 5380 and
// 4850); while other tenants of the VM's host took the L3 (times 2-3 those above), 512 tokens of
// Q and K took 1612 and 1338, of Q and 8 K heads 564 and 490, Q alone still 239 and 377. Zen 5
// VM (family 1Ah model 2, 32 MiB L3, AVX-512), 8 KiB ahead, 7 rounds: 512 tokens 133 and 140,
// of Q and 8 K heads (10 MiB) 155 and 175 (with 2 KiB, 208 and 245), of Q and K (16 MiB) 339
// and 336, 1024 tokens 353 and 370; 2048 tokens 1524 and 1147; out of place (streamed) 512
// tokens 227 and 228, of Q and 8 K heads 288 and 291, of Q and K 521 and 493 (a non-temporal
// copy 506). On the AVX-512 Xeon VM the prefetch helped within its L3 too (512 tokens in place
// 44-45 to 49 GB/s: beyond_core_cache), so other CPUs keep the L2 threshold. beyond_cache is
// beyond_core_cache(bytes), which the call tests once (in a one-token call each cache-size
// lookup is a call of its own).
bool prefetches(double bytes, bool beyond_cache) {
  if (!beyond_cache) return false;
  const auto l3 = static_cast<double>(detail::amd_l3_bytes());
  return l3 == 0 || 2 * bytes > l3;
}

// What the calls of one rope_apply share. An empty Options::isa is resolved here, at the call
// (not value_or: that would read POSENC_ISA even when an ISA is given).
Rotation rotation(const RopePlan& plan, DType d, std::int64_t n_tokens, std::int64_t n_heads, const RopeTensor& q,
                  const RopeTensor& k, const Options& options) {
  const Isa isa = options.isa ? *options.isa : selected_isa();
  const double bytes = call_bytes(d, n_tokens, n_heads, plan.params().head_dim, q, k);
  const bool beyond_cache = beyond_core_cache(bytes);
  const bool prefetched = prefetches(bytes, beyond_cache);
  const std::int64_t ahead = prefetched ? prefetch_rows(plan.params(), d, q.in == q.out) : 0;
  const bool all_kept = all_rows_kept(plan, n_tokens);
  const bool in_place = q.in == q.out && (!k.in || k.in == k.out);
  const bool stream = streams(options, beyond_cache);
  const std::int64_t at_once = in_place ? (all_kept ? 1 : detail::in_place_parts(d, prefetched))
                                        : (stream ? detail::streamed_parts(d) : 1);
  // A streaming call in parts prefetches each part's head rows into L1 a little ahead
  // (detail::streamed_parts_prefetch_bytes; elements.hpp, heads_in_turn). Issue 19's thirteenth
  // round, the AVX-512 Xeon VM, f32 out of place, the paired bench's ratios to the copy (3 runs of
  // each build, alternating), 4 parts without against with prefetcht0 1 KiB ahead: Q 0.88 to
  // 0.94-0.95 at 512 tokens and 0.91 to 0.93-0.94 at 4096; Q of 32 heads and K of 8 0.85 to
  // 0.92-0.94 and 0.88 to 0.93; Q and K 0.89 to 0.94 and 0.97 to 0.97-0.99; in place unchanged.
  // 2 KiB ahead about as fast; 512 bytes slower for Q at 4096 tokens (0.90 against 0.94), 4 KiB
  // slower at 4096 tokens (0.88-0.93 against 0.93-0.98). Into L2 instead (prefetcht1, 2-8 KiB
  // ahead, the eighth round) it was slower than none. A hand-written loop over one stream, 512
  // tokens: 1 KiB ahead into L1 0.96-0.98 of a copy's speed, none 0.90-0.94. (Why, without
  // hardware counters on that VM, a guess: the L2's own prefetcher brings the lines from the L3,
  // where shape A's tensors lie, to L2 but not to L1, where the rotation then waits for them.)
  const std::int64_t part_ahead =
      !in_place && stream ? rows_ahead(plan.params(), d, detail::streamed_parts_prefetch_bytes()) : 0;
  return {kernels(isa), plan, d, n_heads, stream, ahead, all_kept, at_once, part_ahead};
}

// [0, n) on `threads` threads, the calling one and the kept workers (workers.hpp), which share it
// in pieces of whole units (SharedRanges): thread_work(next) runs once on each thread, next(begin,
// end) giving its pieces until it returns false. Every token's result is independent of the split.
template <class F>
void parallel_tokens(std::int64_t n, int threads, std::int64_t unit, F thread_work) {
  if (threads < 1) throw InvalidParameter("threads", std::to_string(threads), ">= 1");
  const int parts = static_cast<int>(std::min<std::int64_t>(threads, std::max<std::int64_t>(n, 1)));
  if (parts == 1) {
    bool given = false;
    return thread_work([&](std::int64_t& begin, std::int64_t& end) {
      begin = 0;
      end = n;
      return !std::exchange(given, true);
    });
  }
  detail::SharedRanges ranges(n, parts, unit);
  detail::run_sharing(parts, [&](int i) {
    thread_work([&](std::int64_t& begin, std::int64_t& end) { return ranges.next(i, begin, end); });
  });
}

void check_call(const RopePlan& plan, DType d, std::int64_t n_tokens, std::int64_t n_heads,
                const std::int64_t* positions, const RopeTensor& q, const RopeTensor& k) {
  if (static_cast<int>(d) < 0 || static_cast<int>(d) > 2) throw InvalidParameter("dtype", std::to_string(static_cast<int>(d)), "f32, bf16 or f16");
  if (n_tokens < 0) throw InvalidParameter("n_tokens", std::to_string(n_tokens), ">= 0");
  if (n_heads < 1) throw InvalidParameter("n_heads", std::to_string(n_heads), ">= 1");
  if (n_tokens > 0 && !positions) throw InvalidParameter("positions", "null", "non-null");
  const std::int64_t axes = plan.params().position_axes();
  std::int64_t position_bytes = 0;  // (a multiplication's overflow test: no division per call)
  if (__builtin_mul_overflow(n_tokens, 8 * axes, &position_bytes)) {
    throw InvalidParameter("n_tokens", std::to_string(n_tokens), "a count whose positions array fits in memory");
  }
  check_tensor(q, "q", true);
  check_tensor(k, "k", false);
  check_layout(d, n_tokens, n_heads, plan.params().head_dim, q, k);
}

// Every position of a call, before any write.
void check_positions(const RopePlan& plan, std::int64_t n_tokens, const std::int64_t* positions) {
  const std::int64_t axes = plan.params().position_axes();
  for (std::int64_t i = 0; i < n_tokens * axes; ++i) check_position(positions[i], "rope.position");
}

}  // namespace

namespace detail {
namespace {

// This thread's last anchors: the plan, the coarse anchor A and the anchor a (RopePlan::kSteps)
// with cos/sin there per pair. Kept across calls, since the layers of a decode step rotate one
// position with one plan call after call, and the steps after it stay near it (SLEEF once per
// kSteps^2 positions, the anchor's angle addition once per kSteps); the values are what a fresh
// computation gives (one function of plan and position, the same bits on every path), so
// keeping them changes no output.
struct Anchor {
  std::uint64_t plan = 0;  // 0: none
  std::int64_t coarse_at = 0, at = 0;
  std::vector<double> positions, coarse_c, coarse_s, c, s;
};
thread_local Anchor last_anchor;

// This thread's last rows with their keys: a row is reused when it is known to be the same, for a
// single-axis plan the same plan and position, for M-RoPE the same token of the same call (K's
// pass after Q's). A call for which all_rows_kept holds keeps each token's row in its own
// slot (slot t: token t of the call), so that the next call at the same positions with the same
// plan computes none: every layer of a forward pass rotates by the same positions (Hugging Face's
// models compute their cos/sin once per pass for all layers: LlamaModel.forward,
// position_embeddings), and a decode step's layers by one. A longer call uses kBlock slots per
// part (slot i: the token's index among its block's tokens of every part, rotate_tokens and
// rotate_parts), whose rows stay in L1 and L2 between a block's Q and K, and keeps only its last
// block. Not zeroed: every row is written before its key says so (zeroing a block's 16 KiB took
// ~15% of a one-token decode call).

struct KeptRows {
  struct Key {
    std::uint64_t plan = 0, call = 0;  // plan 0: none; call: 0 for single-axis rows
    std::int64_t position = 0;         // M-RoPE: the token's index in its call
    bool operator==(const Key&) const = default;
  };
  std::size_t floats = 0;  // per row (kernel_row_floats)
  std::size_t slots = 0;
  std::unique_ptr<float[], LineAligned<float>::Delete> rows;
  std::vector<Key> keys;
  std::uint64_t calls = 0;
  // The thread's last streaming call through a plan: its plan, first position and token count
  // (repeats; FusedRows).
  std::uint64_t last_plan = 0;
  std::int64_t last_first = 0, last_tokens = 0;

  // Whether a streaming call repeats the last (the same plan, first position and token count: the
  // layers of a forward pass), and it is now the last. Only where the rows go hangs on this
  // (FusedRows): every kept row is still checked against its own key.
  bool repeats(std::uint64_t plan, const std::int64_t* positions, std::int64_t n_tokens) {
    const std::int64_t first = n_tokens > 0 ? positions[0] : 0;
    const bool same = last_plan == plan && last_first == first && last_tokens == n_tokens;
    last_plan = plan;
    last_first = first;
    last_tokens = n_tokens;
    return same;
  }
};
thread_local KeptRows kept_rows;

}  // namespace

// The rows a streaming call keeps, one per token, where it repeats the thread's last streaming
// call (KeptRows::repeats) and they take at most this many bytes (4096 tokens at head_dim 128 in the
// half layout). Computed, the rows of such a call took its stream's time: on the AVX-512 Xeon VM
// (issue 19's eleventh round), 4096 tokens x 32 heads x 128, f32, out of place (streamed), one
// build switching between computing every row and reading every row kept, alternating batches,
// 11 rounds, the median of each ratio to a non-temporal copy in two processes: Q 0.864 and 0.908
// computed against 0.915 and 0.919 kept, Q and 8 K heads 0.862 and 0.918 against 0.899 and 0.926,
// Q and K 1.002 and 1.019 against 1.013 and 1.030. Keeping every row of every call that long
// instead made calls at new positions each time slower, their rows written to 2 MiB of cold
// slots (each line read for ownership): Q 0.853 and 0.849 against 0.792 and 0.782, Q and 8 K
// heads 0.899 and 0.900 against 0.847 and 0.819; so a call keeps them only when it repeats the
// last, the second layer of a forward pass (each thread of a call keeps a slot per token of the
// call: up to 2 MiB each). In place not: the same switch there, which also made a pass of the
// whole call, read Q 0.939 and 0.940 of an in-place scale's speed against 0.915 and 0.917, but Q
// and K 0.910 and 0.915 against 0.935 and 0.913 on this VM, and was slower on the Zen 3 VM
// (all_rows_kept); this rule was not measured there.
constexpr std::size_t kRepeatedStreamRowBytes = std::size_t{2} << 20;

// The fused path's rows, each computed when a token's first tensor asks for it (unless kept): in
// slot t for token t where the call's rows are all kept (all_rows_kept) or where a streaming call
// repeats the last (kRepeatedStreamRowBytes), else in slot i (KeptRows).
class FusedRows {
 public:
  FusedRows(const RopePlan& plan, const Kernels& kernels, const std::int64_t* positions, std::int64_t n_tokens,
            bool all_rows_kept, bool streaming)
      : plan_(plan), kernels_(kernels), positions_(positions), kept_(kept_rows), by_token_(all_rows_kept) {
    const std::size_t floats = kernel_row_floats(plan);
    if (streaming && kept_.repeats(plan.id_, positions, n_tokens) && plan.params().position_axes() == 1 &&
        static_cast<std::size_t>(n_tokens) <= kRepeatedStreamRowBytes / (floats * sizeof(float))) {
      by_token_ = true;
    }
    const auto slots = static_cast<std::size_t>(by_token_ ? std::max(n_tokens, kBlock) : kBlock * kMaxParts);
    if (kept_.floats != floats || kept_.slots < slots) {
      kept_.floats = kept_.slots = 0;
      kept_.keys.assign(slots, KeptRows::Key{});
      kept_.rows.reset(LineAligned<float>().allocate(slots * floats));
      kept_.floats = floats;
      kept_.slots = slots;
    }
    call_ = ++kept_.calls;
  }

  const float* operator()(std::int64_t t, std::int64_t i) {
    const std::int64_t axes = plan_.params().position_axes();
    const std::int64_t* position = positions_ + t * axes;
    const KeptRows::Key key = axes == 1 ? KeptRows::Key{plan_.id_, 0, *position} : KeptRows::Key{plan_.id_, call_, t};
    const auto at = static_cast<std::size_t>(by_token_ ? t : i);
    float* c = kept_.rows.get() + at * kept_.floats;
    float* s = c + kept_.floats / 2;
    KeptRows::Key& slot = kept_.keys[at];
    if (slot != key) {
      slot = {};
      row(position, c, s);
      to_kernel_row(plan_, c, s);
      slot = key;
    }
    return c;
  }

 private:
  // RopePlan::row_unchecked's bits, with the anchors' sin/cos kept (last_anchor). (Prefetching
  // the next token's step-table rows, and its kept-row slot, into L1 here measured slower: 512
  // tokens x 32 heads in place on a Zen 5 VM, in batches alternating with none in one process,
  // 1.01-1.04 times as long; a Q-only call's rows in two slots, kept in L1, 0.99.)
  void row(const std::int64_t* position, float* c, float* s) {
    if (plan_.params().position_axes() != 1) return plan_.row_unchecked(position, c, s, kernels_);
    const std::int64_t step = RopePlan::step_of(*position), anchor = *position - step;
    const std::int64_t j = RopePlan::coarse_step_of(*position), coarse = anchor - j * RopePlan::kSteps;
    const auto n = static_cast<std::size_t>(plan_.pairs());
    Anchor& a = last_anchor;
    if (a.plan != plan_.id_ || a.at != anchor || a.c.size() != n) {
      const bool coarse_kept = a.plan == plan_.id_ && a.coarse_at == coarse && a.coarse_c.size() == n;
      a.plan = 0;
      if (!coarse_kept) {
        a.positions.assign(n, static_cast<double>(coarse));
        a.coarse_c.resize(n);
        a.coarse_s.resize(n);
        plan_.angles(a.positions.data(), 0, n, a.coarse_c.data(), a.coarse_s.data(), kernels_);
        a.coarse_at = coarse;
      }
      a.c.resize(n);
      a.s.resize(n);
      plan_.to_anchor(a.coarse_c.data(), a.coarse_s.data(), j, 0, n, a.c.data(), a.s.data(), kernels_);
      a.plan = plan_.id_;
      a.at = anchor;
    }
    plan_.stepped(a.c.data(), a.s.data(), step, 0, n, c, s, kernels_);
  }

  const RopePlan& plan_;
  const Kernels& kernels_;
  const std::int64_t* positions_;
  KeptRows& kept_;
  bool by_token_;  // slot t for token t, else slot i (rotate_tokens)
  std::uint64_t call_;
};

// This thread's last call of one block of tokens (at most kBlock, rotated on this thread: a
// decode step's), kept for the next call with the same arguments but positions: its checks
// (check_call) passed, and its rotation's choices and runs (set_block_runs), all functions of
// those arguments alone (the plan by its id: a plan never changes), so that the next call checks
// only its positions, as every call must, and takes its rows. The layers of a decode step make
// exactly such calls, the tensors' contents aside, where an engine reuses their buffers from
// layer to layer. On the AVX-512 Xeon VM (f32, half layout, out of place, in L1), both builds in
// one process, alternating batches, medians of 41 rounds, 3 runs: 1 token x 1 head 32.7-32.9
// against 57.4-57.6 ns per call; x 40 heads 185 against 229-257 ns (0.60-0.63 of memcpy's speed
// against 0.43-0.51); at a new position every call, 315-324 against 391-424 ns (the next
// position) and 420-439 against 505-511 (a new anchor). Alternating between two outputs, every
// call misses: 57.2-57.3 against 55.9-56.4 ns at 1 head, within the noise at 40 heads.
class LastBlockCall {
 public:
  // Calls of one block rotated on the calling thread (more threads split a call of several
  // tokens: parallel_tokens), with positions; the others, and every bad thread count or null
  // positions, go the general way, which refuses those.
  static bool takes(std::int64_t n_tokens, const std::int64_t* positions, const Options& options) {
    return n_tokens >= 1 && n_tokens <= kBlock && positions && (options.threads == 1 || (n_tokens == 1 && options.threads > 1));
  }

  // positions_checked() refuses a bad position before anything is written; make_rows(kernels,
  // all_rows_kept, streaming) gives the rows (rotate_tokens's Rows): the plan's, or a cache's.
  template <class CheckPositions, class MakeRows>
  static void rotate(const RopePlan& plan, DType d, std::int64_t n_tokens, std::int64_t n_heads, const std::int64_t* positions,
                     const RopeTensor& q, const RopeTensor& k, const Options& options, CheckPositions positions_checked,
                     MakeRows make_rows) {
    LastBlockCall& last = last_block_call;
    const bool same = last.plan_ == plan.id_ && last.dtype_ == d && last.n_tokens_ == n_tokens &&
                      last.n_heads_ == n_heads && same_tensor(last.q_, q) && same_tensor(last.k_, k) &&
                      last.isa_ == options.isa && last.stores_ == options.stores;
    if (!same) {
      last.plan_ = 0;
      check_call(plan, d, n_tokens, n_heads, positions, q, k);
    }
    positions_checked();
    if (!same) {
      const Rotation r = rotation(plan, d, n_tokens, n_heads, q, k, options);
      set_block_runs(last.runs_, r, q, k, 0, n_tokens);
      last.all_rows_kept_ = r.all_rows_kept;
      last.dtype_ = d;
      last.n_tokens_ = n_tokens;
      last.n_heads_ = n_heads;
      last.q_ = q;
      last.k_ = k;
      last.isa_ = options.isa;
      last.stores_ = options.stores;
      last.plan_ = plan.id_;
    }
    auto rows = make_rows(*last.runs_.kernels, last.all_rows_kept_, false);
    rotate_block(last.runs_, 0, n_tokens, rows);
  }

 private:
  // Byte for byte (RopeTensor holds pointers and integers only: no padding, one representation
  // per value), which compiles to a few vector compares.
  static bool same_tensor(const RopeTensor& a, const RopeTensor& b) {
    static_assert(std::has_unique_object_representations_v<RopeTensor>);
    return std::memcmp(&a, &b, sizeof(RopeTensor)) == 0;
  }

  // The last call's arguments but its positions (and Options::threads: the block is rotated on
  // this thread whatever it is, takes).
  std::uint64_t plan_ = 0;  // 0: none
  DType dtype_{};
  std::int64_t n_tokens_ = 0, n_heads_ = 0;
  RopeTensor q_, k_;
  std::optional<Isa> isa_;
  Stores stores_{};
  BlockRuns runs_{};
  bool all_rows_kept_ = false;
  static thread_local LastBlockCall last_block_call;
};
thread_local LastBlockCall LastBlockCall::last_block_call;

}  // namespace detail

std::string_view to_string(DType d) {
  switch (d) {
    case DType::f32:
      return "f32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "f16";
  }
  return "?";
}

namespace {

// A call's order, through a plan or a cache: its arguments checked, then its positions
// (positions_checked: before anything is written), then the rotation, by the kept one-block
// call where it takes it (detail::LastBlockCall), else on the threads. make_rows(kernels,
// all_rows_kept, streaming: an output written by non-temporal stores) gives a thread's rows
// (rotate_tokens's Rows).
template <class CheckPositions, class MakeRows>
void apply(const RopePlan& plan, DType d, std::int64_t n_tokens, std::int64_t n_heads, const std::int64_t* positions,
           const RopeTensor& q, const RopeTensor& k, const Options& options, CheckPositions positions_checked,
           MakeRows make_rows) {
  if (detail::LastBlockCall::takes(n_tokens, positions, options)) {
    return detail::LastBlockCall::rotate(plan, d, n_tokens, n_heads, positions, q, k, options, positions_checked, make_rows);
  }
  check_call(plan, d, n_tokens, n_heads, positions, q, k);
  positions_checked();
  const Rotation r = rotation(plan, d, n_tokens, n_heads, q, k, options);
  const bool streaming = streamed(r, q) || (k.in && streamed(r, k));
  // Pieces of whole parts, a block of kBlock tokens in each part rotated at once (a shorter piece
  // goes in one part: rotate_tokens).
  parallel_tokens(n_tokens, options.threads, r.parts * kBlock, [&](auto next) {
    std::int64_t begin = 0, end = 0;
    if (!next(begin, end)) return;  // a late worker: nothing left, no rows made
    auto rows = make_rows(r.kernels, r.all_rows_kept, streaming);  // once per thread and call
    do rotate_tokens(r, begin, end, q, k, rows);
    while (next(begin, end));
  });
}

}  // namespace

void rope_apply(const RopePlan& plan, DType d, std::int64_t n_tokens, std::int64_t n_heads, const std::int64_t* positions,
                const RopeTensor& q, const RopeTensor& k, const Options& options) {
  apply(plan, d, n_tokens, n_heads, positions, q, k, options, [&] { check_positions(plan, n_tokens, positions); },
        [&](const detail::Kernels& kernels, bool all_rows_kept, bool streaming) {
          return detail::FusedRows(plan, kernels, positions, n_tokens, all_rows_kept, streaming);
        });
}

void rope_apply(const RopeCache& cache, DType d, std::int64_t n_tokens, std::int64_t n_heads, const std::int64_t* positions,
                const RopeTensor& q, const RopeTensor& k, const Options& options) {
  const auto rows = [&](std::int64_t t, std::int64_t) { return cache.row(positions[t]); };
  apply(
      cache.plan(), d, n_tokens, n_heads, positions, q, k, options,
      [&] {
        for (std::int64_t t = 0; t < n_tokens; ++t) (void)cache.row(positions[t]);  // every position before any write
      },
      [&](const detail::Kernels&, bool, bool) { return rows; });
}

}  // namespace posenc::fast
