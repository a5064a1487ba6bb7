#!/usr/bin/env bash
# The reference through the C ABI against the in-process reference.
#   reference_plugin_test.sh POSENC REFERENCE_PLUGIN FILTER   the same report (verdict and
#       per-file errors) on FILTER's files. Through the ABI the suite forms dot products itself
#       from the plugin's rotated q and k, so files with logits can differ in their worst error;
#       FILTER names files without them.
#   reference_plugin_test.sh POSENC REFERENCE_PLUGIN all   on every vector: both conformant, and
#       the same number of checks. The ABI carries no input lengths or head index, so the 5
#       invalid cases about those (20 checks) are unsupported there.
set -u
source "$(dirname "$0")/../lib/expect.sh"
posenc=$1 reference_plugin=$2 filter=$3
if [ "$filter" != all ]; then
  in_process=$("$posenc" conform --impl reference --profile exact --filter "$filter" --property-cases 0 | grep -v '^implementation:')
  through_abi=$("$posenc" conform --impl "$reference_plugin" --profile exact --filter "$filter" --property-cases 0 | grep -v '^implementation:')
  if [ "$in_process" = "$through_abi" ]; then
    ok "reference plugin reports exactly what the in-process reference reports on $filter"
  else
    fail "reference plugin differs on $filter:"; diff <(echo "$in_process") <(echo "$through_abi") | head
  fi
else
  in_process=$("$posenc" conform --impl reference --profile exact | tail -2)
  through_abi=$("$posenc" conform --impl "$reference_plugin" --profile exact | tail -2)
  read -r p1 _ f1 _ u1 _ <<<"$(head -1 <<<"$in_process")"
  read -r p2 _ f2 _ u2 _ <<<"$(head -1 <<<"$through_abi")"
  if grep -q "^CONFORMANT" <<<"$in_process" && grep -q "^CONFORMANT" <<<"$through_abi" &&
     [ $((p1 + f1 + u1)) -eq $((p2 + f2 + u2)) ] && [ $((u2 - u1)) -eq 20 ]; then
    ok "same verdict on every vector (in process: $(head -1 <<<"$in_process"); through the ABI: $(head -1 <<<"$through_abi"))"
  else
    fail "verdicts differ: in process '$in_process', through the ABI '$through_abi'"
  fi
fi
expect_summary
