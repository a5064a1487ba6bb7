#!/usr/bin/env bash
# peers/jax_attention/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: the attention peer of
# peers/jax_attention/README.md (peers/README.md's contract), judged through the Python package by
# peers/attention_driver.py: OUTDIR/jax_attention-ROW.PROFILE.json per row,
# jax_attention.unsupported.txt and jax_attention.rows.json; or OUTDIR/jax_attention.skipped with
# the reason. FILTER: attention files, comma-separated (default every attention file).
here=$(cd "$(dirname "$0")" && pwd)
export KERAS_BACKEND=jax
exec bash "$here/../python_peer.sh" jax_attention "jax, keras, keras_hub" "$here/jax_attention_peer.py" "$@"
