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
// posenc/strided_view.hpp's do): called, the check costs ~25 instructions of a one-token decode
// call's ~1,200.
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
// tensor's views are values, not entries of arrays indexed at run time, so that the compiler keeps
// them in registers: with the checks inline besides (posenc/strided_view.hpp), a one-token call of
// one head takes ~57 ns instead of ~65.
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
// one. The distance is a measured optimum of each CPU, not a rule; the bench's shape-B cases
// measure it (paired/Q/B/in, paired/QK/B/out and the other paired/*/B cases, whose roofs prefetch
// 1, 2 and 8 KiB ahead). 8 KiB on most CPUs; on AMD family 19h (Zen 3 and 4) 2 KiB (Q in place at
// shape B: 3.91 ms per call against 4.25 with 8 KiB), and 1 KiB for f32 in place (the call's mode
// is Q's).
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

// Tokens [begin, end) in passes (rotate_tokens): the pass's Q tokens, then its K tokens, so that
// each tensor is read in long runs (alternating tensors every token costs ~10% at DRAM bandwidth).
// rows(t, i) gives token t's row (its cosines; kernels.hpp, TokenRun), i = t - the pass's first
// token; the fused path computes it on the Q pass and keeps it for K's. A pass is kBlock tokens,
// or the whole call (but its parts) where all its rows are kept (all_rows_kept), which reads each
// tensor in one run (Q and K of 512 tokens in place: 1.11-1.27 times as fast as in passes of
// kBlock; paired/QK/A/in); in longer calls longer passes, their rows read back from the L3, are no
// faster. A thread's tokens may first go in parts (rotate_parts; the rest, fewer than the parts,
// in passes). Within a pass each tensor's tokens go to the kernels in runs of kBlock, their rows
// computed before the run: one kernel call and one choice of kernel per run, not per token (a run
// per token takes 7-10% longer, runs of 4 tokens 2-5%, and blocks of 64 are no faster;
// paired/Q/A/in). A tensor in place takes ordinary stores even in a streaming call (streamed): its
// lines are in the cache, just read.
constexpr std::int64_t kBlock = 16;

// The rows a thread keeps through a call and after it (detail::KeptRows): every token's where the
// call's rotated spans, padded to lines, hold at most kKeptRowSpans values (512 tokens at head_dim
// 128: 256 KiB of rows in the half layout, 512 KiB interleaved; the layers of a forward pass then
// compute none after the first), else a block's. Not more: every row of 4096 tokens (4 MiB) kept
// is read back from memory by the next call, which in place is slower than computing it (Q at
// shape B: 0.89-0.90 of the in-place scale's speed against 0.92-0.96, paired/Q/B/in) and out of
// place gains little.
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
// tokens of every part. One sequential stream leaves the memory idle much of the time; several
// parts at once keep more lines in flight. Whether that pays depends on the CPU
// (detail::in_place_parts, streamed_parts; the bench's paired/*/B cases measure it): in place
// beyond the caches of AMD family 19h, f32 and f16 (Q and K of 4096 tokens in place: 1.19-1.22
// times as fast in 4 parts, paired/QK/B/in); and in streaming calls not wholly in place on Intel
// CPUs, f32 only (a tensor in place among them goes in the same parts, without streaming). Not
// taken: 2 parts (no faster); bf16 (its split kernel's rows, reordered per part, cost more than
// the parts give); out of place on AMD (non-temporal stores from several places at once are slower
// than from one). On Intel each part prefetches its rows into L1 (rotation).
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
// passes of rotate_tokens do for one block, without their loops: ~110 fewer instructions of a
// one-token call's ~1,000.
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
// output line is first read for ownership and later written back, while non-temporal stores write
// it once. The L2, not the last-level cache: a VM may report the whole socket's L3 as its own, and
// outputs beyond the L2 already stream faster (Q of 512 tokens out of place, 8 MiB each way, with
// a 2 MiB L2: 24-25 GB/s with ordinary stores against 29-31 streamed; bench:
// fused/Q/A/f32/half/out-streaming/1 against out-cached/1).
bool beyond_core_cache(double bytes) { return 2 * bytes > static_cast<double>(detail::core_cache_bytes()); }

bool streams(const Options& o, bool beyond_cache) {
  if (o.stores != Stores::automatic) return o.stores == Stores::streaming;
  return beyond_cache;
}

// Whether rows are prefetched: only beyond the core's caches (in them, a prefetch takes a load
// slot from the rotation for nothing: ~10% of a one-token call of 40 heads), and on an AMD CPU
// only where the call's reads and writes exceed its L3 as well (beyond_core_cache's test, one
// level up). This depends on the CPU (bench: paired/Q/A/in, within a 32 MiB L3, and paired/Q/B/in,
// beyond it): on AMD family 19h the prefetch slows a call within the L3 (Q of 512 tokens in place:
// 251 us per call against 213 without) and speeds one beyond it; on Intel it helps within the L3
// too, so other CPUs keep the L2 threshold. beyond_cache is beyond_core_cache(bytes), which the
// call tests once (in a one-token call each cache-size lookup is a call of its own).
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
  // (detail::streamed_parts_prefetch_bytes; elements.hpp, heads_in_turn), on Intel CPUs, where
  // such calls go in parts: 1 KiB ahead takes Q of 32 heads and K of 8 at 512 tokens from 0.85 to
  // 0.92-0.94 of the copy's speed (paired/GQA/A/out); 512 bytes and 4 KiB are slower, and into L2
  // (prefetcht1) it is slower than none. Presumably the L2's own prefetcher brings the lines from
  // the L3 to L2 but not to L1, where the rotation then waits for them.
  const std::int64_t part_ahead =
      !in_place && stream ? rows_ahead(plan.params(), d, detail::streamed_parts_prefetch_bytes()) : 0;
  return {kernels(isa), plan, d, n_heads, stream, ahead, all_kept, at_once, part_ahead};
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
// block. Not zeroed: every row is written before its key says so, and zeroing the slots would
// be a cost of every one-token decode call.

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
// call (KeptRows::repeats) and they take at most this many bytes (4096 tokens at head_dim 128 in
// the half layout). Computed, the rows of such a call take time from its stream (Q of 4096 tokens
// out of place: 0.86-0.91 of a non-temporal copy's speed computed against 0.92 kept,
// paired/Q/B/out). Keeping every call's rows that long would slow calls at new positions, their
// rows written to 2 MiB of cold slots, each line read for ownership (paired/Q/B/out-moving); so a
// call keeps them only when it repeats the last, as the second layer of a forward pass does (each
// thread of a call keeps a slot per token of the call: up to 2 MiB each). In place not: there it
// is no faster overall (kKeptRowSpans).
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
  // RopePlan::row_unchecked's bits, with the anchors' sin/cos kept (last_anchor). No prefetch of
  // the next token's step-table rows or kept-row slot into L1 here: it makes 512-token in-place
  // calls 1-4% slower.
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

// This thread's last call of one block of tokens (at most kBlock, rotated on this thread: a decode
// step's), kept for the next call with the same arguments but positions: its checks (check_call)
// passed, and its rotation's choices and runs (set_block_runs), all functions of those arguments
// alone (the plan by its id: a plan never changes), so that the next call checks only its
// positions, as every call must, and takes its rows. The layers of a decode step make exactly such
// calls, the tensors' contents aside, where an engine reuses their buffers from layer to layer (1
// token x 1 head, f32, out of place, in L1: ~33 ns per call against ~57 checked in full; bench:
// paired/decode/1/out-step32). A caller alternating between two outputs misses every time, at no
// measurable cost.
class LastBlockCall {
 public:
  // Calls of one block rotated on the calling thread (more threads split a call of several
  // tokens: share_pieces), with positions; the others, and every bad thread count or null
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
  detail::share_pieces(n_tokens, options.threads, r.parts * kBlock, [&](auto next) {
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
