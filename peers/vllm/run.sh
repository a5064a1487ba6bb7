#!/usr/bin/env bash
# peers/vllm/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: vLLM's get_rope classes by forward_native
# on the CPU (vllm_peer.py), judged under PROFILE: OUTDIR/vllm-{f32,bf16,f16}.PROFILE.json,
# vllm.unsupported.txt, vllm.configs.json, vllm.rows.json; or OUTDIR/vllm.skipped with the reason.
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../python_peer.sh" vllm "torch, vllm.model_executor.layers.rotary_embedding" "$here/vllm_peer.py" "$@"
