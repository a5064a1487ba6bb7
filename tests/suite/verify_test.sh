#!/usr/bin/env bash
# `posenc verify` on a results file written by Python: the seed 003 numpy RoPE passes `standard`
# in f64 and fails `strict` at long positions (its angle is formed in binary64); malformed
# results files are refused with the entry named.
set -u
posenc="$1"
source_dir="$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0
failed=0
check() {  # description, expected status, expected text, verify arguments...
  local what="$1" status="$2" needle="$3"; shift 3
  local text; text=$("$posenc" verify "$@" 2>&1); local rc=$?
  if [ $rc -eq "$status" ] && grep -qF -- "$needle" <<<"$text"; then
    echo "ok: $what"; passed=$((passed + 1))
  else
    echo "FAIL: $what (exit $rc):"; echo "$text" | tail -8; failed=$((failed + 1))
  fi
}
/usr/bin/python3 "$source_dir/examples/python/seed003_results.py" "$source_dir/vectors" > "$out/seed003.json" ||
  { echo "FAIL: the example did not run"; exit 1; }
check "seed 003 numpy RoPE passes standard" 0 "88 passed, 0 failed" --results "$out/seed003.json" --profile standard --filter rope/none
check "seed 003 numpy RoPE fails strict at long positions" 1 "position=16777217" --results "$out/seed003.json" --profile strict --filter rope/none
check "report and junit written" 0 "CONFORMANT" --results "$out/seed003.json" --filter rope/none --profile standard \
  --report "$out/report.json" --junit "$out/junit.xml"
if grep -q '"conformant": true' "$out/report.json" && grep -q '<testsuites name="posenc conform"' "$out/junit.xml"; then
  echo "ok: report.json and junit.xml"; passed=$((passed + 1))
else
  echo "FAIL: report files"; failed=$((failed + 1))
fi
# The report read back: compare's table and HTML page (the browser test renders such pages).
compare=$("$posenc" compare "$out/report.json" "$out/report.json" --html "$out/both.html" 2>&1)
if grep -q "rope/none.json" <<<"$compare" && [ "$(grep -c 'class="error-plot"' "$out/both.html")" = 1 ]; then
  echo "ok: compare reads the report back and draws its plot"; passed=$((passed + 1))
else
  echo "FAIL: compare: $compare"; failed=$((failed + 1))
fi
echo '{"implementation": "x", "format": "f64", "results": [{"file": "rope/none.json", "tcId": 1, "values": ["1.5"]}]}' > "$out/bad.json"
check "a decimal where a hex float belongs" 2 "results[0].values[0]': expected a C99 hex float" --results "$out/bad.json"
echo '{"implementation": "x", "format": "f32", "results": [{"file": "rope/none.json", "tcId": 1, "values": ["0x1.0000001p+0"]}]}' > "$out/bad.json"
check "a value not in the declared format" 2 "is not exactly representable in f32" --results "$out/bad.json"
echo '{"implementation": "x", "format": "f64", "results": [{"file": "a", "tcId": 1, "status": "invalid"}, {"file": "a", "tcId": 1, "status": "invalid"}]}' > "$out/bad.json"
check "two results for one case" 2 "a second result for a tcId 1" --results "$out/bad.json"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
