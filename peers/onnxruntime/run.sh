#!/usr/bin/env bash
# peers/onnxruntime/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: ONNX Runtime's RotaryEmbedding
# (peers/onnxruntime/ort_peer.py: the com.microsoft contrib op and the standard opset-23 op, each
# with a framework-way float32 cache and an accurate one: four rows) judged through the Python
# package under PROFILE. Writes OUTDIR/onnxruntime-OP-ROW.PROFILE.json per row (the report of
# posenc serve's finish, as `posenc verify --report` writes it) and OUTDIR/onnxruntime.unsupported.txt;
# or OUTDIR/onnxruntime.skipped with the reason when onnxruntime or onnx cannot be imported from
# the project's .venv (scripts/requirements-peers.txt). FILTER: vector files, space- or
# comma-separated. Exit status 0 whatever the verdicts.
set -euo pipefail
cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") out=$2 profile=$3 filter=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${POSENC_PEER_PYTHON:-$root/.venv/bin/python}
mkdir -p "$out"
rm -f "$out/onnxruntime.skipped"
if ! why=$("$python" -c "import onnx, onnxruntime, torch, numpy" 2>&1); then
  echo "onnxruntime: cannot import onnx, onnxruntime, torch and numpy with $python (scripts/requirements-peers.txt): ${why##*$'\n'}" \
    >"$out/onnxruntime.skipped"
  exit 0
fi
export PYTHONPATH=$root/python/src${PYTHONPATH:+:$PYTHONPATH} POSENC_CLI=$cli
"$python" "$here/ort_peer.py" "$cli" "$out" "$profile" "$filter"
