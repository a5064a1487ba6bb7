#!/usr/bin/env bash
# peers/transformers/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: Hugging Face transformers' RoPE
# judged by posenc (peers/README.md): transformers 5.25.0 (the venv's), rows
# transformers-{f32,bf16,f16}, and transformers 4.49.0 (.venv/transformers-4.49, installed by
# scripts/python-venv.sh peers), rows transformers-4.49-{f32,bf16,f16}, kept for the verdicts that
# differ (README.md). Writes OUTDIR/NAME-ROW.PROFILE.json (posenc verify --report),
# NAME.unsupported.txt, NAME.configs.json and NAME.rows.json, NAME transformers and
# transformers-4.49; or NAME.skipped with the reason. The interpreter: POSENC_PEER_PYTHON, else the
# project's .venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/../python_peer.sh" transformers "torch, transformers" "$here/run_peer.py" "$@"
v4=$here/../../.venv/transformers-4.49
if [ -d "$v4" ]; then
  POSENC_PEER_PATH=$(cd "$v4" && pwd) bash "$here/../python_peer.sh" transformers-4.49 "torch, transformers" \
    "$here/run_peer.py" "$@"
else
  mkdir -p "$2"
  echo "no $v4 (scripts/python-venv.sh peers installs transformers 4.49.0 there)" >"$2/transformers-4.49.skipped"
fi
