#!/usr/bin/env bash
# peers/transformers/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: Hugging Face transformers' RoPE
# judged by posenc (peers/README.md). Writes OUTDIR/transformers-{f32,bf16,f16}.PROFILE.json
# (posenc verify --report), transformers.unsupported.txt, transformers.configs.json and
# transformers.rows.json; or OUTDIR/transformers.skipped with the reason when transformers cannot
# be imported here. The interpreter: POSENC_PEER_PYTHON, else the project's .venv
# (scripts/python-venv.sh peers).
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" transformers "torch, transformers" "$here/run_peer.py" "$@"
