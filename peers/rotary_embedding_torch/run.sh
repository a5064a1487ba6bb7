#!/usr/bin/env bash
# peers/rotary_embedding_torch/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: lucidrains'
# rotary-embedding-torch on the CPU (ret_peer.py), judged under PROFILE:
# OUTDIR/rotary_embedding_torch-{f32,bf16,f16}.PROFILE.json, rotary_embedding_torch.unsupported.txt,
# .configs.json, .rows.json; or OUTDIR/rotary_embedding_torch.skipped.
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" rotary_embedding_torch "torch, rotary_embedding_torch" "$here/ret_peer.py" "$@"
