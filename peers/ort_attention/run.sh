#!/usr/bin/env bash
# peers/ort_attention/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: the attention peer of peers/ort_attention/README.md
# (peers/README.md's contract), judged through the Python package by peers/attention_driver.py:
# OUTDIR/ort_attention-ROW.PROFILE.json per row, ort_attention.unsupported.txt and ort_attention.rows.json; or OUTDIR/ort_attention.skipped
# with the reason. FILTER: attention files, comma-separated (default every attention file).
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" ort_attention "onnx, onnxruntime, torch" "$here/ort_attention_peer.py" "$@"
