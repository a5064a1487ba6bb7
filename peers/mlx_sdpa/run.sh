#!/usr/bin/env bash
# peers/mlx_sdpa/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: the attention peer of peers/mlx_sdpa/README.md
# (peers/README.md's contract), judged through the Python package by peers/attention_driver.py:
# OUTDIR/mlx_sdpa-ROW.PROFILE.json per row, mlx_sdpa.unsupported.txt and mlx_sdpa.rows.json; or
# OUTDIR/mlx_sdpa.skipped with the reason when the project's .venv (or POSENC_PEER_PYTHON) cannot
# import mlx.core, mlx_lm. FILTER: attention files, comma-separated (default every attention file).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") out=$2 profile=$3 filter=${4:-}
python=${POSENC_PEER_PYTHON:-$root/.venv/bin/python}
mkdir -p "$out"
rm -f "$out/mlx_sdpa.skipped" "$out"/mlx_sdpa-*."$profile".json
if ! [ -x "$python" ]; then
  echo "no Python at $python (scripts/python-venv.sh peers makes it)" >"$out/mlx_sdpa.skipped"
  exit 0
fi
if ! why=$(cd / && "$python" -c "import mlx.core, mlx_lm" 2>&1); then  # from /: not the cwd's folders
  echo "$python cannot import mlx.core, mlx_lm (scripts/python-venv.sh peers): ${why##*$'\n'}" >"$out/mlx_sdpa.skipped"
  exit 0
fi
PYTHONPATH="$root/python/src:$root/peers:$root/peers/onnxruntime:$here" "$python" "$here/mlx_sdpa_peer.py" "$cli" "$out" "$profile" ${filter:+"$filter"}
