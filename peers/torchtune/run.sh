#!/usr/bin/env bash
# peers/torchtune/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: torchtune's RoPE modules on the CPU
# (torchtune_peer.py), judged under PROFILE: OUTDIR/torchtune-{f32,bf16,f16}.PROFILE.json,
# torchtune.unsupported.txt, torchtune.configs.json, torchtune.rows.json; or OUTDIR/torchtune.skipped.
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" torchtune "torch, torchtune.modules" "$here/torchtune_peer.py" "$@"
