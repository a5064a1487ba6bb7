#!/usr/bin/env bash
# peers/run.sh POSENC_CLI OUTDIR [FILTER]: runs every peer (peers/*/run.sh, the contract in
# peers/README.md) under the standard and strict profiles into OUTDIR, then writes from their JSON
# reports OUTDIR/peers.md (peers/table.py; `make peers` copies it to docs/peers.md) and a
# `posenc compare --html` page, OUTDIR/peers.html, with every report on the same plots.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli=$1 out=$2 filter=${3:-}
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.skipped "$out"/*.unsupported.txt "$out"/timings.txt
for run in "$here"/*/run.sh; do
  name=$(basename "$(dirname "$run")")
  for profile in standard strict; do
    load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)
    start=$(date +%s%N)
    bash "$run" "$cli" "$out" "$profile" ${filter:+"$filter"}
    seconds=$(( ($(date +%s%N) - start) / 1000000 ))  # milliseconds
    echo "$name $profile $seconds $load" >>"$out/timings.txt"
    if [ -f "$out/$name.skipped" ]; then
      echo "posenc: peer $name skipped: $(cat "$out/$name.skipped")"
      break
    fi
    echo "posenc: peer $name under $profile: $((seconds / 1000)).$(printf %03d $((seconds % 1000))) s wall (load $load)"
  done
done
shopt -s nullglob
reports=("$out"/*.standard.json "$out"/*.strict.json)
rm -f "$out/peers.html"
if [ ${#reports[@]} -gt 0 ]; then
  "$cli" compare --html "$out/peers.html" "${reports[@]}" >"$out/compare.txt"
fi
python3 "$here/table.py" "$out" "${filter:+$filter}" >"$out/peers.md"
echo "posenc: $out/peers.md$([ -f "$out/peers.html" ] && echo ", $out/peers.html")"
