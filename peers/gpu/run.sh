#!/usr/bin/env bash
# The RoPE people run on a GPU, judged here (peers/gpu/README.md). Three steps, the middle one on
# the machine with the GPU, which needs Python with torch, transformers and triton but no posenc
# CLI (its cases travel as a file, its outputs come back as results files):
#   run.sh export POSENC OUTDIR [FILTER]   here: OUTDIR/cases.jsonl, the cases of FILTER's files
#                                          (default rope/none,rope/llama3,rope/yarn) in f32, bf16, f16
#   run.sh device CASES DEVICE OUTDIR      there: gpu_rows.py (DEVICE cuda, or cpu to check it here)
#   run.sh verify POSENC OUTDIR            here: `posenc verify` of each results file under standard
#                                          and strict: OUTDIR/NAME-ROW.PROFILE.json and .txt
#   run.sh POSENC OUTDIR PROFILE [FILTER]  peers/run.sh's call (peers/README.md's contract):
#                                          OUTDIR/gpu.skipped, as the rows need a GPU run
# PYTHON (default python3) is the interpreter of the export and device steps.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers=$(dirname "$here")
python=${PYTHON:-python3}
export PYTHONPATH="$peers/../python/src:$peers:$peers/transformers:$here${PYTHONPATH:+:$PYTHONPATH}"
case ${1:-} in
  export)
    cli=$2 out=$3 filter=${4:-rope/none,rope/llama3,rope/yarn}
    mkdir -p "$out"
    "$python" - "$cli" "$out/cases.jsonl" "$filter" <<'PY'
import sys, posenc
cli, path, filter_ = sys.argv[1:]
with posenc.Session(cli=cli) as s:
    cases = s.cases(filter_.split(","), formats=["f32", "bf16", "f16"], valid=None, save=path)
print(f"run.sh export: {len(cases)} cases of {filter_} in {path}")
PY
    echo "$filter" >"$out/filter.txt"  # what verify judges: these files, each row in its format
    ;;
  device)
    "$python" "$here/gpu_rows.py" "$2" "$3" "$4"
    ;;
  verify)
    cli=$2 out=$3 filter=$(cat "$3/filter.txt")
    shopt -s nullglob
    results=("$out"/*.results.json)
    ((${#results[@]} > 0)) || { echo "run.sh verify: no results files in $out" >&2; exit 2; }
    for r in "${results[@]}"; do
      name=$(basename "$r" .results.json)
      for profile in standard strict; do
        status=0
        "$cli" verify --results "$r" --profile "$profile" --filter "$filter" --formats "${name##*-}" \
          --report "$out/$name.$profile.json" \
          >"$out/$name.$profile.txt" 2>&1 || status=$?
        if ((status > 1)); then cat "$out/$name.$profile.txt" >&2; exit "$status"; fi
        echo "$name $profile: $(tail -1 "$out/$name.$profile.txt")"
      done
    done
    ;;
  -*|"")
    sed -n '2,12p' "$0" >&2
    exit 2
    ;;
  *)
    # peers/run.sh's contract call (POSENC OUTDIR PROFILE [FILTER]): this peer's rows need a GPU
    # run (the three steps above), so here it is skipped, never passed or failed.
    [ $# -ge 3 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
    mkdir -p "$2"
    echo "needs a GPU: its rows come from run.sh export, device and verify (peers/gpu/README.md)" >"$2/gpu.skipped"
    ;;
esac
