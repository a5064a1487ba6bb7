#!/usr/bin/env bash
# peers/sdpa/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: the attention peer of peers/sdpa/README.md
# (peers/README.md's contract), judged through the Python package by peers/attention_driver.py:
# OUTDIR/sdpa-ROW.PROFILE.json per row, sdpa.unsupported.txt and sdpa.rows.json; or OUTDIR/sdpa.skipped
# with the reason. FILTER: attention files, comma-separated (default every attention file).
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" sdpa "torch.nn.attention, transformers" "$here/sdpa_peer.py" "$@"
