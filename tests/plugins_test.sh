#!/usr/bin/env bash
# The suite through the C ABI: the reference plugin gives the same verdict and errors as the
# in-process reference; a straightforward binary64 plugin passes `standard`; every mutant and
# every hostile plugin is rejected, each with the check that caught it named, and nothing hangs
# past its timeout or takes the suite down.
set -u
posenc="$1"
plugins="$2"
reference_plugin="$3"
passed=0
failed=0

check() {  # description, expected exit status, expected text, conform arguments...
  local what="$1" status="$2" needle="$3"; shift 3
  local out; out=$("$posenc" conform "$@" 2>&1); local rc=$?
  if [ $rc -eq "$status" ] && grep -qF -- "$needle" <<<"$out"; then
    echo "ok: $what"; passed=$((passed + 1))
  else
    echo "FAIL: $what (exit $rc, expected $status and '$needle'):"; echo "$out" | tail -15; failed=$((failed + 1))
  fi
}

# (Mutant and hostile checks below skip the property checks, --property-cases 0, to keep the test
# short; the "property:" checks run them.)
# Under the sanitizers (POSENC_PLUGINS_QUICK=1, set by the sanitizer build) only the NaN, hostile
# and loading checks run: the whole-file reference comparisons and the mutant runs take about
# 11 minutes more there. They check verdicts, which `make test` does; what a sanitizer can find,
# the suite's handling of misbehaving children, is in the hostile checks.
quick=${POSENC_PLUGINS_QUICK:-0}
if [ "$quick" != 1 ]; then
# Same verdict and the same per-file errors as the in-process reference. (Through the ABI the
# suite forms dot products itself from the plugin's rotated q and k, so files with logits can
# differ in their worst error; everything else must be identical.)
for filter in sinusoidal/paper sinusoidal/tensor2tensor alibi/slopes alibi/bias learned; do
  in_process=$("$posenc" conform --impl reference --profile exact --filter "$filter" --property-cases 0 | grep -v '^implementation:')
  through_abi=$("$posenc" conform --impl "$reference_plugin" --profile exact --filter "$filter" --property-cases 0 | grep -v '^implementation:')
  if [ "$in_process" = "$through_abi" ]; then
    echo "ok: reference plugin reports exactly what the in-process reference reports on $filter"; passed=$((passed + 1))
  else
    echo "FAIL: reference plugin differs on $filter:"; diff <(echo "$in_process") <(echo "$through_abi") | head; failed=$((failed + 1))
  fi
done
# On every vector: both conformant, and the same number of checks. The ABI carries no input
# lengths or head index, so the 5 invalid cases about those (20 checks) are unsupported there.
in_process=$("$posenc" conform --impl reference --profile exact | tail -2)
through_abi=$("$posenc" conform --impl "$reference_plugin" --profile exact | tail -2)
read -r p1 _ f1 _ u1 _ <<<"$(head -1 <<<"$in_process")"
read -r p2 _ f2 _ u2 _ <<<"$(head -1 <<<"$through_abi")"
if grep -q "^CONFORMANT" <<<"$in_process" && grep -q "^CONFORMANT" <<<"$through_abi" &&
   [ $((p1 + f1 + u1)) -eq $((p2 + f2 + u2)) ] && [ $((u2 - u1)) -eq 20 ]; then
  echo "ok: same verdict on every vector (in process: $(head -1 <<<"$in_process"); through the ABI: $(head -1 <<<"$through_abi"))"
  passed=$((passed + 1))
else
  echo "FAIL: verdicts differ: in process '$in_process', through the ABI '$through_abi'"; failed=$((failed + 1))
fi
fi

p="$plugins/posenc_test_plugin"
if [ "$quick" != 1 ]; then
check "binary64 plugin passes standard" 0 "CONFORMANT" --impl "${p}_double.so" --profile standard
check "binary64 plugin is not exact" 1 "NOT CONFORMANT" --impl "${p}_double.so" --profile exact --filter rope/none --property-cases 0

check "mutant: layouts swapped" 1 "scaled error" --impl "${p}_swap_layout.so" --profile standard --filter rope/none --property-cases 0
check "mutant: HF-style binary32 angle fails strict" 1 "position=16777217" --impl "${p}_float_angle.so" --profile strict --filter rope/none --formats f32 --property-cases 0
check "mutant: llama.cpp-style iterative theta" 1 "scaled error" --impl "${p}_iterative_theta.so" --profile strict --filter rope/none --formats f32 --property-cases 0
check "mutant: angles in bf16" 1 "scaled error" --impl "${p}_bf16_angle.so" --profile standard --filter rope/none --property-cases 0
check "mutant: positions off by one" 1 "scaled error" --impl "${p}_off_by_one.so" --profile standard --filter rope/none --property-cases 0
check "mutant: partial rotary rotates the tail" 1 "scaled error" --impl "${p}_rotate_tail.so" --profile standard --filter rope/partial --property-cases 0
check "mutant: tensor2tensor frequencies as paper" 1 "scaled error" --impl "${p}_t2t_as_paper.so" --profile standard --filter sinusoidal/paper --property-cases 0
check "mutant: ALiBi slopes as if a power of two" 1 "scaled error" --impl "${p}_alibi_pow2.so" --profile standard --filter alibi/slopes --property-cases 0
check "mutant: YaRN without its attention factor" 1 "scaled error" --impl "${p}_yarn_no_attention.so" --profile standard --filter rope/yarn --property-cases 0
check "mutant: learned table clamps" 1 "accepted invalid parameters (expected an error on learned.position)" --impl "${p}_clamp_learned.so" --profile standard --filter learned --property-cases 0

check "property: off by one breaks the zero-rotation identity" 1 "failed          0 cases  rope_zero_rotation" --impl "${p}_off_by_one.so" --profile standard --filter alibi/slopes
check "property: shrunk counterexample with its replay seed" 1 "head_dim=2 rotary_dim=2" --impl "${p}_off_by_one.so" --profile standard --filter alibi/slopes --seed 7
check "property: a rotated tail breaks passthrough" 1 "rope_partial_passthrough" --impl "${p}_rotate_tail.so" --profile standard --filter alibi/slopes
check "property: clamping breaks out-of-range refusal" 1 "failed          0 cases  learned_out_of_range" --impl "${p}_clamp_learned.so" --profile standard --filter alibi/slopes
check "property: swapped layouts break the layout permutation" 1 "half-layout element" --impl "${p}_swap_layout.so" --profile standard --filter alibi/slopes
check "property: tensor2tensor frequencies break shift-linearity" 1 "rotated by" --impl "${p}_t2t_as_paper.so" --profile standard --filter alibi/slopes
check "property: power-of-two ALiBi slopes fail the differential check" 1 " heads, " --impl "${p}_alibi_pow2.so" --profile standard --filter learned
check "property: a missing YaRN attention factor fails the differential check" 1 "scaling=yarn" --impl "${p}_yarn_no_attention.so" --profile standard --filter learned
check "property: binary64 angles break distance-only logits under strict" 1 "rope_distance_only" --impl "${p}_double.so" --profile strict --filter alibi/slopes

fi

check "mutant: NaN inputs read as 0" 1 "expected nan" --impl "${p}_nan_to_zero.so" --filter rope/nan --formats f64 --profile standard --property-cases 0
check "the plain plugin propagates NaN to its pair" 0 "CONFORMANT" --impl "${p}_double.so" --filter rope/nan --formats f64 --profile standard --property-cases 0
check "hostile: abort" 1 "crashed with signal 6" --impl "${p}_crash.so" --filter rope/partial --formats f64 --property-cases 0
check "hostile: never returns" 1 "did not return within" --impl "${p}_hang.so" --filter rope/partial --formats f64 --timeout 0.3 --property-cases 0
check "hostile: exit(0) mid-call" 1 "ended without answering" --impl "${p}_exit.so" --filter rope/partial --formats f64 --property-cases 0
check "hostile: garbage status" 1 "returned an unknown status 42" --impl "${p}_bad_status.so" --filter rope/partial --formats f64 --property-cases 0
check "hostile: success without output" 1 "nan, expected" --impl "${p}_no_output.so" --filter rope/partial --formats f64 --property-cases 0
check "hostile: writes past its output" 1 "crashed with signal 11" --impl "${p}_write_past.so" --filter rope/partial --formats f64 --property-cases 0
check "hostile: reads past its input" 1 "crashed with signal 11" --impl "${p}_read_past.so" --filter rope/partial --formats f64 --property-cases 0
check "hostile: prints megabytes to stdout" 1 "printed more than 1048576 bytes to stdout/stderr and was stopped; it printed: \"rope debug: token 0" --impl "${p}_print.so" --filter rope/partial --formats f64 --property-cases 0
check "hostile: allocates until the limit" 1 "crashed with signal 6" --impl "${p}_alloc_hog.so" --filter rope/partial --formats f64 --property-cases 0 --memory-limit 256
check "hostile: writes into its input" 1 "modified its input" --impl "${p}_write_input.so" --filter rope/partial --formats f64 --property-cases 0
check "not a plugin" 2 "cannot load" --impl /etc/hostname.so

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
