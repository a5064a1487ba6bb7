#!/usr/bin/env bash
# peers/mlx/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: MLX's mx.fast.rope through mlx-lm's RoPE
# classes on the CPU (mlx_peer.py), judged under PROFILE: OUTDIR/mlx-{f32,bf16,f16}.PROFILE.json,
# mlx.unsupported.txt, mlx.configs.json, mlx.rows.json; or OUTDIR/mlx.skipped with the reason.
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" mlx "mlx.core, mlx_lm.models.rope_utils" "$here/mlx_peer.py" "$@"
