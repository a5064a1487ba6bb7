#!/usr/bin/env bash
# The HTML report and `posenc compare`, rendered in headless Chromium: the built-in fast path
# next to a mutant plugin (float32 angle), and the attention test plugin's page, each plot and its
# series checked where the browser drew them, the console silent, and the checker shown to reject
# a broken page.
# Usage: html_report_test.sh POSENC PLUGIN_DIR CHROMIUM PYTHON
set -euo pipefail
posenc=$1 plugins=$2 chromium=$3 python=$4
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$here/../lib/expect.sh"
# check NAME COMMAND...: COMMAND must succeed.
check() { local name=$1; shift; expect "$name" 0 "" "$@"; }

"$posenc" conform --impl fast --property-cases 20 --report "$out/fast.json" --html "$out/fast.html" >/dev/null 2>&1
# The mutant fails: conform exits 1, and its report names failing properties with counterexamples.
status=0
"$posenc" conform --impl "$plugins/posenc_test_plugin_float_angle.so" --filter rope/none --property-cases 20 \
  --report "$out/mutant.json" --html "$out/mutant.html" >/dev/null 2>&1 || status=$?
check "mutant run is not conformant (exit 1)" test "$status" = 1
"$posenc" compare "$out/fast.json" "$out/mutant.json" --html "$out/compare.html" >"$out/compare.txt"
check "compare prints both verdicts" grep -q "CONFORMANT *NOT CONFORMANT" "$out/compare.txt"

check "conform --html renders (fast)" "$python" "$here/check_html_report.py" "$chromium" "$out/fast.html" "$out/fast.json"
check "conform --html renders (mutant, failing properties)" \
  "$python" "$here/check_html_report.py" "$chromium" "$out/mutant.html" "$out/mutant.json"
# The attention files are plotted by position too (the binary32 attention test plugin).
"$posenc" conform --impl "$plugins/posenc_test_plugin_attention.so" --filter attention --property-cases 0 \
  --report "$out/attention.json" --html "$out/attention.html" >/dev/null 2>&1
check "conform --html renders the attention files" \
  "$python" "$here/check_html_report.py" "$chromium" "$out/attention.html" "$out/attention.json"
check "the attention page plots its six files of valid cases" test "$(grep -c 'class="error-plot" data-file="attention/' "$out/attention.html")" = 6
check "compare --html renders both on shared axes" \
  "$python" "$here/check_html_report.py" "$chromium" "$out/compare.html" "$out/fast.json" "$out/mutant.json"
check "the browser check rejects a broken page" \
  "$python" "$here/check_html_report.py" "$chromium" --self-test "$out/compare.html" "$out/fast.json" "$out/mutant.json"

# The page is self-contained: nothing fetched, no scripts.
check "no external resource or script" bash -c "! grep -Eiq '<script|src=|href=|@import|url\\(' '$out/compare.html'"

# compare refuses reports that do not add up or are not reports.
sed 's/"conformant": false/"conformant": true/' "$out/mutant.json" >"$out/forged.json"
check "a report whose verdict was edited is refused" bash -c \
  "! '$posenc' compare '$out/forged.json' 2>'$out/err' && grep -q \"field 'conformant': disagrees\" '$out/err'"
sed 's/"schema": "posenc-report-4"/"schema": "posenc-report-9"/' "$out/fast.json" >"$out/future.json"
check "an unknown report schema is refused" bash -c \
  "! '$posenc' compare '$out/future.json' 2>'$out/err' && grep -q 'unknown report schema' '$out/err'"
check "a vector file is not a report" bash -c "! '$posenc' compare '$here/../../vectors/rope/none.json' 2>/dev/null"

expect_summary
