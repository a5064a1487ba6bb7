#!/usr/bin/env bash
# peers/ort_attention/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: the attention peer of peers/ort_attention/README.md
# (peers/README.md's contract), judged through the Python package by peers/attention_driver.py:
# OUTDIR/ort_attention-ROW.PROFILE.json per row, ort_attention.unsupported.txt and ort_attention.rows.json; or
# OUTDIR/ort_attention.skipped with the reason when the project's .venv (or POSENC_PEER_PYTHON) cannot
# import onnx, onnxruntime, torch. FILTER: attention files, comma-separated (default every attention file).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") out=$2 profile=$3 filter=${4:-}
python=${POSENC_PEER_PYTHON:-$root/.venv/bin/python}
mkdir -p "$out"
rm -f "$out/ort_attention.skipped" "$out"/ort_attention-*."$profile".json
if ! [ -x "$python" ]; then
  echo "no Python at $python (scripts/python-venv.sh peers makes it)" >"$out/ort_attention.skipped"
  exit 0
fi
if ! why=$(cd / && "$python" -c "import onnx, onnxruntime, torch" 2>&1); then  # from /: not the cwd's folders
  echo "$python cannot import onnx, onnxruntime, torch (scripts/python-venv.sh peers): ${why##*$'\n'}" >"$out/ort_attention.skipped"
  exit 0
fi
PYTHONPATH="$root/python/src:$root/peers:$root/peers/onnxruntime:$here" "$python" "$here/ort_attention_peer.py" "$cli" "$out" "$profile" ${filter:+"$filter"}
