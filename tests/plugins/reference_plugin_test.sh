#!/usr/bin/env bash
# The reference through the C ABI against the in-process reference.
#   reference_plugin_test.sh POSENC REFERENCE_PLUGIN FILTER   the same report (verdict and
#       per-file errors) on FILTER's files. Through the ABI the suite forms dot products itself
#       from the plugin's rotated q and k, so files with logits can differ in their worst error;
#       FILTER names files without them. Further arguments go to both runs (e.g. --exclude).
#   reference_plugin_test.sh POSENC REFERENCE_PLUGIN all   on every vector: both conformant, and
#       the same number of checks. The ABI carries no input lengths or head index, so the 12
#       invalid cases about those (48 checks: 5 of RoPE, ALiBi and sinusoidal tables, 7 of
#       attention) are not judged there. Through the ABI the suite
#       forms dot products itself, judged by `strict` bounds (a sinusoidal dot: d + 12 units of
#       u s), which are vacuous in bf16 from d = 500 on (SPEC.md section 5): sinusoidal/dot.json's
#       7 bf16 checks at d_model 512 are not judged there (bound vacuous), where in process
#       `exact` judges the very bits.
set -u
source "$(dirname "$0")/../lib/expect.sh"
posenc=$1 reference_plugin=$2 filter=$3
shift 3
if [ "$filter" != all ]; then
  in_process=$("$posenc" conform --impl reference --profile exact --filter "$filter" --property-cases 0 "$@" |
    grep -v '^implementation:')
  through_abi=$("$posenc" conform --impl "$reference_plugin" --profile exact --filter "$filter" --property-cases 0 "$@" |
    grep -v '^implementation:')
  if [ "$in_process" = "$through_abi" ]; then
    ok "reference plugin reports exactly what the in-process reference reports on $filter"
  else
    fail "reference plugin differs on $filter:"; diff <(echo "$in_process") <(echo "$through_abi") | head
  fi
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  "$posenc" conform --impl reference --profile exact --report "$out/in.json" "$@" >"$out/in.txt"
  "$posenc" conform --impl "$reference_plugin" --profile exact --report "$out/abi.json" "$@" >"$out/abi.txt"
  # passed, failed, not judged and (among those) bound-vacuous checks (case x format) from the
  # JSON report's summary.
  counts() {
    /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]
print(s["passed"], s["failed"], sum(s["notJudged"].values()), s["notJudged"]["boundVacuous"])' "$1"
  }
  read -r p1 f1 u1 v1 <<<"$(counts "$out/in.json")"
  read -r p2 f2 u2 v2 <<<"$(counts "$out/abi.json")"
  if [[ "$(tail -1 "$out/in.txt")" == "CONFORMANT: "* ]] && [[ "$(tail -1 "$out/abi.txt")" == "CONFORMANT: "* ]] &&
     [ $((p1 + f1 + u1)) -eq $((p2 + f2 + u2)) ] && [ $((u2 - v2 - u1 + v1)) -eq 48 ] && [ "$v1" -eq 0 ] &&
     [ "$v2" -lt 20 ]; then
    ok "same verdict on every vector (in process: $(tail -1 "$out/in.txt"); through the ABI: $(tail -1 "$out/abi.txt"))"
  else
    fail "verdicts differ: in process '$(tail -1 "$out/in.txt")', through the ABI '$(tail -1 "$out/abi.txt")'"
  fi
fi
expect_summary
