#!/usr/bin/env bash
# `posenc verify` on a results file written by Python: the seed 003 numpy RoPE passes `standard`
# in f64 and fails `strict` at long positions (its angle is formed in binary64); malformed
# results files are refused with the entry named.
set -u
posenc="$1"
source_dir="$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/../lib/expect.sh"
/usr/bin/python3 "$source_dir/examples/python/seed003_results.py" "$source_dir/vectors" > "$out/seed003.json" ||
  { echo "FAIL: the example did not run"; exit 1; }
expect "seed 003 numpy RoPE passes standard" 0 "CONFORMANT: 133 checks judged (f64 133); not judged: 2,539 (no entry point 2,440, inputs not representable 99)" "$posenc" verify --results "$out/seed003.json" --profile standard --filter rope/none
expect "seed 003 numpy RoPE fails strict at long positions" 1 "position=16777217" "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none
expect "report and junit written" 0 "CONFORMANT" "$posenc" verify --results "$out/seed003.json" --filter rope/none --profile standard \
  --report "$out/report.json" --junit "$out/junit.xml"
if grep -q '"conformant": true' "$out/report.json" && grep -q '<testsuites name="posenc conform"' "$out/junit.xml"; then
  ok "report.json and junit.xml"
else
  fail "report files"
fi
# The report read back: compare's table and HTML page (the browser test renders such pages).
compare=$("$posenc" compare "$out/report.json" "$out/report.json" --html "$out/both.html" 2>&1)
if grep -q "rope/none.json" <<<"$compare" && [ "$(grep -c 'class="error-plot"' "$out/both.html")" = 1 ]; then
  ok "compare reads the report back and draws its plot"
else
  fail "compare: $compare"
fi
# Margins and the accurate context (SPEC.md section 9): the numpy RoPE's binary64 angle fails
# strict at long positions; judged only up to its accurate context it passes, one step past it it
# fails.
expect "margin is the headline column" 1 "vectors                         margin  passed" \
  "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none --report "$out/strict.json"
up_to=$(/usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["groups"][0]; m=g["worstMargin"]
assert m["value"] > 1 and m["format"] == "f64" and m["position"] is not None and m["element"] is not None, m
print(int(g["accurateContext"]["f64"]["upTo"]))' "$out/strict.json") && ok "worstMargin above 1 and accurateContext in the report ($up_to)" ||
  fail "worstMargin and accurateContext in the report"
expect --regex "the text names the accurate context and where it fails" 1 \
  "f64 margin .*, strict up to position $up_to (fails at position [0-9]*)" \
  "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none
if grep -q "position=2047 " <<<"$expect_output" && ! grep -q "(position " <<<"$expect_output"; then
  ok "failures name each position once"
else
  fail "failures name positions twice: $(grep -m1 FAIL <<<"$expect_output")"
fi
# Every failure in the JSON report; the text shows --max-failures of them, under their groups.
# How many fail depends on the machine's numpy (its binary64 sin and cos are SIMD kernels chosen
# by CPU: 88 checks on an AVX2 machine, 89 on an AVX-512 one), so the counts the text must show
# are read from the JSON report, which is checked first to hold between 6 and 100 of them.
read -r failed group7 < <(/usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["groups"][0]
assert 5 < g["failed"] <= 100 and len(g["failures"]) == g["failed"], (g["failed"], len(g["failures"]))
assert {"group", "groupComment", "tcId", "format", "message"} == set(g["failures"][0]), g["failures"][0]
print(g["failed"], sum(f["group"] == 7 for f in g["failures"]))' "$out/strict.json") &&
  ok "all $failed failures in the JSON report" || fail "failures in the JSON report"
expect "the text shows 5 and says how many more" 1 "and $((failed - 5)) more failures in" \
  "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none
expect "under their test group" 1 "    group 7 (head_dim 8, rotary_dim 8, base 10000, interleaved: rotation of inputs on the common grid (judged in f64, f32, bf16, f16)): $group7 failed" \
  "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none
expect "--max-failures 100 shows all" 1 "NOT CONFORMANT" \
  "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none --max-failures 100
[ "$(grep -c '      FAIL ' <<<"$expect_output")" = "$failed" ] && ! grep -q "more failures" <<<"$expect_output" &&
  ok "$failed FAIL lines" || fail "--max-failures 100 shows $(grep -c '      FAIL ' <<<"$expect_output") lines, expected $failed"
expect "--max-failures must be an integer >= 0" 2 "--max-failures" \
  "$posenc" verify --results "$out/seed003.json" --max-failures -2
expect --regex "judged up to the accurate context it passes" 0 "^CONFORMANT: .* beyond --max-position [0-9]" \
  "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none --max-position "$up_to"
next=$(/usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["groups"][0]
print(int(min(p["position"] for p in g["errorByPosition"] if p["position"] > int(sys.argv[2]))))' "$out/strict.json" "$up_to")
expect "one judged position further it fails" 1 "NOT CONFORMANT" \
  "$posenc" verify --results "$out/seed003.json" --profile strict --filter rope/none --max-position "$next"
# compare: each column named by implementation and profile, nothing cut, columns aligned.
compare=$("$posenc" compare "$out/report.json" "$out/strict.json" 2>&1)
if /usr/bin/python3 -c '
import sys
lines = sys.stdin.read().splitlines()
name = "seed 003 numpy RoPE (results " + sys.argv[1] + ")"
head, verdict, row = lines[0], lines[1], lines[2]
a, b = head.index(name + " (standard)"), head.index(name + " (strict)")
assert verdict[a:].startswith("CONFORMANT") and verdict[b:].startswith("NOT CONFORMANT"), lines
assert row.startswith("rope/none.json") and row[a - 2:a] == "  " and row[a] != " " and row[b] != " ", lines
' "$out/seed003.json" <<<"$compare"; then
  ok "compare names and aligns its columns"
else
  fail "compare columns: $compare"
fi
expect "--max-position must be an integer >= 0" 2 "--max-position" \
  "$posenc" verify --results "$out/seed003.json" --max-position -1
# Entries that cannot be judged as given are refused, naming the entry and field.
bad() { echo "{\"implementation\": \"x\", \"format\": \"$1\", \"results\": [$2]}" > "$out/bad.json"; }
bad f64 '{"file": "rope/none.json", "tcId": 1, "status": "invalid"}, {"file": "rope/linaer.json", "tcId": 1, "status": "invalid"}'
expect "a misspelled vector file" 2 "field 'results[1].file': 'rope/linaer.json' is not a vector file" \
  "$posenc" verify --results "$out/bad.json" --filter rope/none
bad f64 '{"file": "rope/none.json", "tcId": 999999, "status": "invalid"}'
expect "a tcId that does not exist" 2 "field 'results[0].tcId': rope/none.json has no case with tcId 999999" \
  "$posenc" verify --results "$out/bad.json"
bad f64 '{"file": "rope/none.json", "tcId": 1, "values": ["0x1p+0"]}'
expect "a wrong number of values" 2 "field 'results[0].values': 1 values; rope/none.json tcId 1 has 2 outputs" \
  "$posenc" verify --results "$out/bad.json"
bad f64 '{"file": "rope/none.json", "tcId": 1, "valuse": ["0x1p+0"]}'
expect "an unknown field" 2 "valuse" "$posenc" verify --results "$out/bad.json"
bad f16 '{"file": "rope/none.json", "tcId": 328, "status": "invalid"}'
expect "a format the case's inputs are not exact in" 2 \
  "field 'results[0]': rope/none.json tcId 328 has inputs that are not f16 values" "$posenc" verify --results "$out/bad.json"
bad f16 '{"file": "rope/none.json", "tcId": 328, "status": "unsupported"}'
expect "such a case may be declared unsupported" 1 "NOT CONFORMANT" "$posenc" verify --results "$out/bad.json" --filter rope/none
echo '{"implementation": "x", "format": "f64", "results": [{"file": "rope/none.json", "tcId": 1, "values": ["1.5"]}]}' > "$out/bad.json"
expect "a decimal where a hex float belongs" 2 "results[0].values[0]': expected a C99 hex float" "$posenc" verify --results "$out/bad.json"
echo '{"implementation": "x", "format": "f32", "results": [{"file": "rope/none.json", "tcId": 1, "values": ["0x1.0000001p+0"]}]}' > "$out/bad.json"
expect "a value not in the declared format" 2 "is not exactly representable in f32" "$posenc" verify --results "$out/bad.json"
echo '{"implementation": "x", "format": "f64", "results": [{"file": "rope/none.json", "tcId": 1, "status": "invalid"}, {"file": "rope/none.json", "tcId": 1, "status": "invalid"}]}' > "$out/bad.json"
expect "two results for one case" 2 "a second result for rope/none.json tcId 1" "$posenc" verify --results "$out/bad.json"
# workingFormat (SPEC.md section 7): what standard's angle allowance is counted in. Declared f32,
# the f64 results are allowed 2^29 times more angle error, so their worst margin shrinks; the
# command line's --working-format wins over the file's.
sed 's/"format": "f64"/"format": "f64", "workingFormat": "f32"/' "$out/seed003.json" > "$out/working_f32.json"
margin() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["groups"][0]["worstMargin"]["value"])' "$1"; }
for run in "seed003 default" "working_f32 default" "working_f32 f64"; do
  set -- $run
  extra=()
  [ "$2" = default ] || extra=(--working-format "$2")
  expect "workingFormat: $1 results, --working-format $2" 0 "CONFORMANT" "$posenc" verify --results "$out/$1.json" \
    --profile standard --filter rope/none --report "$out/$1_$2.json" "${extra[@]}"
done
/usr/bin/python3 -c 'import sys; d, f32, f64 = map(float, sys.argv[1:]); assert f32 < d / 1000 and f64 == d, sys.argv' \
  "$(margin "$out/seed003_default.json")" "$(margin "$out/working_f32_default.json")" "$(margin "$out/working_f32_f64.json")" &&
  ok "workingFormat f32 shrinks the margin; --working-format f64 restores it" || fail "workingFormat margins"
# The reports say which working format each storage format's allowance was counted in.
working() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["workingFormats"]["f64"])' "$1"; }
[ "$(working "$out/seed003_default.json") $(working "$out/working_f32_default.json") $(working "$out/working_f32_f64.json")" = "f64 f32 f64" ] &&
  ok "the JSON report's workingFormats: default f64, declared f32, --working-format f64" || fail "workingFormats in the report"
expect "the text names the working formats under standard" 0 "angles formed in f32 for f64, f32 for f32" \
  "$posenc" verify --results "$out/working_f32.json" --profile standard --filter rope/none
expect "compare reads the report back" 0 "CONFORMANT" "$posenc" compare "$out/working_f32_default.json"
sed 's/"format": "f64"/"format": "f64", "workingFormat": "bf16"/' "$out/seed003.json" > "$out/bad.json"
expect "a 16-bit working format is refused" 2 "field 'workingFormat': 'bf16': expected f32 or f64" \
  "$posenc" verify --results "$out/bad.json"
for value in f16 bf16=f16 f32=f32,f32=f64 x=f32 f32,bf16=f32; do
  expect "--working-format $value is refused" 2 "--working-format" \
    "$posenc" verify --results "$out/seed003.json" --working-format "$value"
done
expect_summary
