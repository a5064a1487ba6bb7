#!/usr/bin/env bash
# posenc fast under the suite.
#   conform_fast_test.sh POSENC ISA   the ISA path must be CONFORMANT under `strict` on every
#                                     vector and property, the attention vectors judged in f32,
#                                     bf16 and f16; a path the CPU lacks exits 77, which CTest
#                                     reports as skipped, never as passed.
#   conform_fast_test.sh POSENC options   POSENC_ISA forces the path `--impl fast` uses, an
#                                     unknown one is refused, and `exact` rejects the fast path.
set -u
posenc="$1"
source "$(dirname "$0")/../lib/expect.sh"
if [ "$2" != options ]; then
  isa=$2 status=0
  out=$("$posenc" conform --impl "fast:$isa" --profile strict 2>&1) || status=$?
  if [ "$status" -eq 2 ] && grep -q "a fast path this CPU supports" <<<"$out"; then
    echo "skipped: fast:$isa (this CPU does not support it)"
    exit 77
  fi
  expect_result --regex "fast:$isa is conformant under strict ($(tail -1 <<<"$out"))" 0 "^CONFORMANT" "$status" "$out"
  # Attention is judged, not reported unsupported (which would pass unjudged), in every storage
  # format the decode kernel offers, on every attention file but the given tables'.
  expect --regex "fast:$isa attention is judged in f32, bf16 and f16" 0 \
    "^CONFORMANT: [0-9]* checks judged (f32 [1-9][0-9]*, bf16 [1-9][0-9]*, f16 [1-9][0-9]*)" \
    "$posenc" conform --impl "fast:$isa" --profile strict --property-cases 0 \
    --filter attention/decode attention/prefill attention/scalings attention/alibi attention/conditioning \
    attention/invalid
  # A given cos/sin table is refused (the kernel forms its own angles): asked for, the file is
  # judged nowhere, which fails the run rather than passing it unjudged.
  expect --regex "fast:$isa judges no given table" 1 \
    "attention/tables.json asked for and judged nowhere (.*refused" \
    "$posenc" conform --impl "fast:$isa" --profile strict --property-cases 0 --filter attention/tables
else
  expect "POSENC_ISA=scalar forces the scalar path" 0 "implementation: posenc fast (scalar)" \
    env POSENC_ISA=scalar "$posenc" conform --impl fast --filter alibi/slopes --property-cases 0
  expect "an unknown POSENC_ISA is refused" 2 "invalid POSENC_ISA = 'avx9'" env POSENC_ISA=avx9 "$posenc" conform --impl fast
  # The suite can fail the fast path: it is not correctly rounded everywhere, so `exact` rejects it.
  expect "exact rejects the fast path (it claims strict, not correct rounding)" 1 "NOT CONFORMANT" \
    "$posenc" conform --impl fast --profile exact --filter rope/none --property-cases 0
fi
expect_summary
