"""lucidrains' rotary-embedding-torch as a posenc peer (CPU): `rotary_embedding_torch.RotaryEmbedding`
(0.9.1, on torch 2.15.0), as its README uses it.

ret_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: one row per dtype of q (rotary_embedding_torch-f32,
-bf16, -f16; peers/peer_driver.py writes the reports). A test group becomes
`RotaryEmbedding(dim=rotary_dim, theta=base, interpolate_factor=factor (linear),
theta_rescale_factor=alpha (ntk: theta * alpha^(dim / (dim - 2))))`, and a rotation
`rotate_queries_or_keys(x of shape (batch 1, heads 1, tokens 1, head_dim), offset=position)`: it
rotates pairs (2i, 2i + 1) of the first dim elements (the interleaved layout; the rest copied), with
the positions `(arange(tokens) + offset) / interpolate_factor` formed in x's dtype, the angles
float32, the rotation in float32 cast back to x's dtype. One module per dtype (its cached
frequencies are shared by the calls at offset 0).

Outputs: rotations; logits (torch.matmul of the rotated q and k in the dtype); table rows as the
rotation forms them (peers/torch_rows.py); frequencies in the f32 row: the module's `freqs`
(float32) and the attention factor 1. Not supported: the half layout, proportional RoPE, the other
scalings, the backward rotation, M-RoPE.
"""
import sys
from importlib.metadata import version

import torch
from rotary_embedding_torch import RotaryEmbedding

import peer_driver
import torch_rows
from peer_driver import Unsupported

VERSION = version("rotary-embedding-torch")


class Rope:
    def __init__(self, kwargs):
        self.kwargs, self.modules = kwargs, {}

    def rotate(self, x, position, dtype):
        if dtype not in self.modules:
            self.modules[dtype] = RotaryEmbedding(**self.kwargs)
        t = torch.as_tensor(x, dtype=torch.float32).to(dtype).reshape(1, 1, 1, -1)
        return self.modules[dtype].rotate_queries_or_keys(t, offset=position).reshape(-1)


class RotaryEmbeddingTorch:
    name = "rotary_embedding_torch"
    framework = "rotary-embedding-torch (lucidrains)"
    version = f"{VERSION} (torch {torch.__version__})"
    rows = torch_rows.ROWS
    working_format = "f32"

    def describe(self, row):
        return f"rotary_embedding_torch-{row}: rotary-embedding-torch {VERSION} (torch {torch.__version__}, CPU), dtype {row}"

    def prepare(self, case, group):
        p = case.params
        s = p["scaling"]
        if p["layout"] != "interleaved":
            raise Unsupported("the half layout: rotate_half pairs (2i, 2i + 1)")
        if p["partial"] != "standard":
            raise Unsupported("proportional RoPE: the frequencies are over dim, the rotated span")
        if p["inverse"]:
            raise Unsupported("the backward rotation: no argument says it")
        if p.get("mrope_section"):
            raise Unsupported("M-RoPE: one position per token (its axial frequencies are another scheme)")
        kwargs = {"dim": p["rotary_dim"], "theta": p["base"]}
        if s["kind"] == "linear":
            kwargs["interpolate_factor"] = s["factor"]  # positions / factor; the module asserts factor >= 1
        elif s["kind"] == "ntk":
            kwargs["theta_rescale_factor"] = s["factor"]
        elif s["kind"] != "none":
            raise Unsupported(f"scaling {s['kind']}: rotary-embedding-torch has no argument for it")
        RotaryEmbedding(**kwargs)  # refuses what the module refuses (interpolate_factor < 1)
        return Rope(kwargs)

    def config(self, case, rope):
        return {"module": "RotaryEmbedding", "apply": "rotate_queries_or_keys(x, offset)", "config": rope.kwargs,
                "seqLen": None}

    def outputs(self, case, rope, row):
        def frequencies():
            rope.rotate(torch.zeros(case.params["head_dim"]), 0, torch.float32)
            return torch.cat([rope.modules[torch.float32].freqs.detach().float(), torch.ones(1)])
        return torch_rows.outputs(case, row, rope.rotate, frequencies, "freqs")


if __name__ == "__main__":
    peer_driver.run(RotaryEmbeddingTorch(), *sys.argv[1:])
