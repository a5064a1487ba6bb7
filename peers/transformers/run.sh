#!/usr/bin/env bash
# peers/transformers/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: Hugging Face transformers' RoPE
# judged by posenc (peers/README.md). Writes OUTDIR/transformers-{f32,bf16,f16}.PROFILE.json
# (posenc verify --report), transformers.unsupported.txt and transformers.configs.json; or
# OUTDIR/transformers.skipped with the reason when transformers cannot be imported here.
# The interpreter: POSENC_PEER_PYTHON, else the project's .venv (scripts/python-venv.sh peers).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cli=$1 out=$2 profile=$3 filter=${4:-}
python=${POSENC_PEER_PYTHON:-$root/.venv/bin/python}
mkdir -p "$out"
rm -f "$out"/transformers.skipped "$out"/transformers-*."$profile".json
if ! [ -x "$python" ]; then
  echo "no Python at $python (scripts/python-venv.sh peers makes it)" >"$out/transformers.skipped"
  exit 0
fi
if ! why=$("$python" -I -c 'import torch, transformers' 2>&1); then  # -I: not the cwd's folders
  echo "$python cannot import torch and transformers (scripts/python-venv.sh peers): ${why##*$'\n'}" \
    >"$out/transformers.skipped"
  exit 0
fi
PYTHONPATH="$root/python/src:$here" "$python" "$here/run_peer.py" "$cli" "$out" "$profile" ${filter:+"$filter"}
