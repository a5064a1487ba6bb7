"""torchtune's RoPE modules as a posenc peer (CPU): `torchtune.modules.RotaryPositionalEmbeddings`
(scaling none) and `torchtune.models.llama3_1.Llama3ScaledRoPE` (llama3), torchtune 0.6.1 on
torch 2.15.0.

torchtune_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: one row per model dtype (torchtune-f32,
torchtune-bf16, torchtune-f16; peers/peer_driver.py writes the reports). A module is built with
dim = head_dim, base, max_seq_len = the group's largest position + 1 (its cos/sin cache covers
[0, max_seq_len), in float32), and called as torchtune's attention calls it: forward(x of shape
(batch 1, tokens 1, heads 1, head_dim), input_pos = [[position]]). It rotates pairs (2i, 2i + 1)
(the interleaved layout) of x.float() and casts the result to x's dtype. The half layout is
torchtune's too, by its own convention for Hugging Face checkpoints: its weight converter
(`torchtune.models.convert_weights._permute`) permutes the rows of q and k so that the pair (i,
i + head_dim/2) becomes (2i, 2i + 1); the adapter permutes x the same way and the output back
(data movement only).

Outputs: rotations; logits (torch.matmul of the rotated q and k in the dtype); table rows as the
rotation forms them (peers/torch_rows.py); frequencies in the f32 row: the module's `theta`
(float32) and the attention factor 1. Not supported: partial rotary (the module
rotates all of x), other scalings, the backward rotation, M-RoPE, positions outside the cache
(negative ones index from its end).
"""
import sys

import torch
import torchtune
from torchtune.models.llama3_1 import Llama3ScaledRoPE
from torchtune.modules import RotaryPositionalEmbeddings

import peer_driver
import torch_rows
from peer_driver import Unsupported

MAX_CACHE = 1 << 18  # the largest cos/sin cache built here (positions)


class Rope:
    def __init__(self, cls, kwargs, half):
        self.cls, self.kwargs, self.module, self.half = cls, kwargs, cls(**kwargs), half
        d = kwargs["dim"]
        # _permute's order: interleaved element 2i + j holds the half layout's element j * d/2 + i.
        self.order = torch.arange(d).reshape(2, d // 2).T.reshape(-1)

    def rotate(self, x, position, dtype):
        if not 0 <= position < self.kwargs["max_seq_len"]:
            raise Unsupported(f"a position outside the module's cos/sin cache [0, max_seq_len) (max_seq_len up to "
                              f"{MAX_CACHE} here)")
        t = torch.as_tensor(x, dtype=torch.float32).to(dtype)
        if self.half:
            t = t[self.order]
        y = self.module(t.reshape(1, 1, 1, -1), input_pos=torch.tensor([[position]])).reshape(-1)
        if self.half:
            y = torch.empty_like(y).index_copy_(0, self.order, y)
        return y


class Torchtune:
    name = "torchtune"
    framework = "torchtune (RotaryPositionalEmbeddings, Llama3ScaledRoPE)"
    version = f"{torchtune.__version__} (torch {torch.__version__})"
    rows = torch_rows.ROWS
    working_format = "f32"

    def describe(self, row):
        return f"torchtune-{row}: torchtune {torchtune.__version__} (torch {torch.__version__}, CPU), dtype {row}"

    def prepare(self, case, group):
        p = case.params
        s = p["scaling"]
        if p["rotary_dim"] != p["head_dim"] or p["partial"] != "standard":
            raise Unsupported("partial rotary: torchtune's modules rotate every element of x")
        if p["inverse"]:
            raise Unsupported("the backward rotation: no module argument says it")
        if p.get("mrope_section"):
            raise Unsupported("M-RoPE: one position per token")
        if s["kind"] not in ("none", "llama3"):
            raise Unsupported(f"scaling {s['kind']}: torchtune has no module for it")
        largest = max((torch_rows.position(c.raw[k]) or 0 for c in group for k in ("position", "qPosition",
                                                                                     "kPosition") if k in c.raw),
                      default=0)
        kwargs = {"dim": p["head_dim"], "max_seq_len": min(max(largest, 0) + 1, MAX_CACHE), "base": p["base"]}
        if s["kind"] == "llama3":
            kwargs.update(scale_factor=s["factor"], low_freq_factor=s["low_freq_factor"],
                          high_freq_factor=s["high_freq_factor"], old_context_len=int(s["original_max_positions"]))
            return Rope(Llama3ScaledRoPE, kwargs, p["layout"] == "half")
        return Rope(RotaryPositionalEmbeddings, kwargs, p["layout"] == "half")

    def config(self, case, rope):
        apply = "forward(x, input_pos)" + (", x in convert_weights._permute's order" if rope.half else "")
        return {"module": rope.cls.__name__, "apply": apply, "config": rope.kwargs, "seqLen": None}

    def outputs(self, case, rope, row):
        return torch_rows.outputs(case, row, rope.rotate, lambda: torch.cat([rope.module.theta.float(), torch.ones(1)]),
                                  "theta")


if __name__ == "__main__":
    peer_driver.run(Torchtune(), *sys.argv[1:])
