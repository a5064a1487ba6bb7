#!/usr/bin/env python3
"""peers/llamacpp/unsupported.py REPORT.json...: one line per report, vector file and part (accuracy,
validation) with checks the llama.cpp plugin did not answer, as `posenc conform` counted them
(`refused`: the plugin returned POSENC_UNSUPPORTED; `noEntryPoint`: it exports no such entry
point), and why (the plugin's mapping, peers/llamacpp/plugin/llamacpp_plugin.cpp). The reasons
are per file: the ABI carries no reason with POSENC_UNSUPPORTED, so a file whose groups are
refused for several reasons lists them all."""
import json
import sys

FORMATS = "ggml's CPU rope takes GGML_TYPE_F32 or GGML_TYPE_F16 tensors only (ggml_compute_forward_rope)"
NO_ENTRY = ("the plugin exports posenc_rope_apply and posenc_attention only: ggml has no RoPE table or frequency output, "
            "and no sinusoidal, ALiBi or learned-table op of this kind (rope tables, frequencies and the others)")
INT32 = "positions outside int32 (ggml's positions tensor is GGML_TYPE_I32)"
REFUSED = {  # file: why its groups are refused in f32 and f16
    "rope/none.json": INT32,
    "rope/ntk.json": "NTK: ggml takes freq_base as given and has no NTK argument",
    "rope/dynamic.json": "dynamic NTK: no ggml argument (freq_base is taken as given)",
    "rope/llama3.json": "llama3: the per-pair factors are computed by llama.cpp's GGUF converter "
                        "(rope_freqs, conversion/llama.py), not by ggml",
    "rope/proportional.json": "proportional: ggml's n_dims is both the exponent's dimension and the rotated span",
    "rope/yarn.json": "yarn with truncate false: ggml_rope_yarn_corr_dims always floors and ceils; " + INT32,
    "rope/mrope.json": "interleaved M-RoPE: GGML_ROPE_TYPE_MROPE has NEOX ordering only; " + INT32,
    "attention/tables.json": "a given cos/sin table: llama.cpp rotates q and k itself (ggml_rope_ext)",
    "attention/alibi.json": "an ALiBi distance past 2048 (the flash path's f16 mask holds -|p_i - p_j|)",
    "attention/scalings.json": "a RoPE scaling the RoPE row refuses (llama3, dynamic NTK, yarn with truncate false, "
                               "proportional); positions outside int32",
    "rope/invalid.json": "invalid parameters of a kind or option the plugin does not map (refused as "
                         "unsupported before they are validated)",
}

for path in sys.argv[1:]:
    report = json.load(open(path))
    row = path.rsplit("/", 1)[-1].split(".")[0]
    for g in report["groups"]:
        for part in ("accuracy", "validation"):
            nj = g[part]["notJudged"]
            refused = nj.get("refused", {})
            wide = {f: n for f, n in refused.items() if f in ("f64", "bf16")}
            narrow = {f: n for f, n in refused.items() if f in ("f32", "f16")}
            counts = lambda d: ", ".join(f"{f} {n}" for f, n in d.items())
            if wide:
                print(f"{row}: {g['file']} {part}: unsupported ({counts(wide)}): {FORMATS}")
            if narrow:
                why = REFUSED.get(g["file"], INT32)
                print(f"{row}: {g['file']} {part}: unsupported ({counts(narrow)}): {why}")
            if nj.get("noEntryPoint"):
                print(f"{row}: {g['file']} {part}: no entry point ({counts(nj['noEntryPoint'])}): {NO_ENTRY}")
