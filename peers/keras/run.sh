#!/usr/bin/env bash
# peers/keras/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: keras-hub's RotaryEmbedding layers on
# Keras's JAX backend (keras_peer.py), judged under PROFILE: OUTDIR/keras-{f32,bf16,f16}.PROFILE.json,
# keras.unsupported.txt, keras.configs.json, keras.rows.json; or OUTDIR/keras.skipped with the reason.
here=$(cd "$(dirname "$0")" && pwd)
export KERAS_BACKEND=jax
exec bash "$here/../python_peer.sh" keras "jax, keras, keras_hub" "$here/keras_peer.py" "$@"
