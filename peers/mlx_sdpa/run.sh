#!/usr/bin/env bash
# peers/mlx_sdpa/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: the attention peer of peers/mlx_sdpa/README.md
# (peers/README.md's contract), judged through the Python package by peers/attention_driver.py:
# OUTDIR/mlx_sdpa-ROW.PROFILE.json per row, mlx_sdpa.unsupported.txt and mlx_sdpa.rows.json; or OUTDIR/mlx_sdpa.skipped
# with the reason. FILTER: attention files, comma-separated (default every attention file).
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" mlx_sdpa "mlx.core, mlx_lm" "$here/mlx_sdpa_peer.py" "$@"
