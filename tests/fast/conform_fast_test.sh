#!/usr/bin/env bash
# posenc fast under the suite: every ISA path this machine supports must be CONFORMANT under
# `strict` on every vector and property; a path the CPU lacks is reported as skipped, never as
# passed. POSENC_ISA must force the path `--impl fast` uses.
set -u
posenc="$1"
failed=0
for isa in scalar avx2 avx512; do
  out=$("$posenc" conform --impl "fast:$isa" --profile strict 2>&1); rc=$?
  if [ $rc -eq 2 ] && grep -q "a fast path this CPU supports" <<<"$out"; then
    echo "skipped: fast:$isa (this CPU does not support it)"
  elif [ $rc -eq 0 ] && grep -q "^CONFORMANT" <<<"$out"; then
    echo "ok: fast:$isa is conformant under strict ($(tail -2 <<<"$out" | head -1))"
  else
    echo "FAIL: fast:$isa (exit $rc)"; echo "$out" | grep -v "^  passed" | tail -30; failed=1
  fi
done
out=$(POSENC_ISA=scalar "$posenc" conform --impl fast --filter alibi/slopes --property-cases 0 2>&1)
if grep -q "implementation: posenc fast (scalar)" <<<"$out"; then
  echo "ok: POSENC_ISA=scalar forces the scalar path"
else
  echo "FAIL: POSENC_ISA=scalar was not honoured: $out"; failed=1
fi
out=$(POSENC_ISA=avx9 "$posenc" conform --impl fast 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "invalid POSENC_ISA = 'avx9'" <<<"$out"; then
  echo "ok: an unknown POSENC_ISA is refused"
else
  echo "FAIL: POSENC_ISA=avx9 gave exit $rc: $out"; failed=1
fi
# The suite can fail the fast path: it is not correctly rounded everywhere, so `exact` rejects it.
out=$("$posenc" conform --impl fast --profile exact --filter rope/none --property-cases 0 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "NOT CONFORMANT" <<<"$out"; then
  echo "ok: exact rejects the fast path (it claims strict, not correct rounding)"
else
  echo "FAIL: exact did not reject the fast path (exit $rc)"; failed=1
fi
exit $failed
