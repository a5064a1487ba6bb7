"""vLLM's RoPE as a posenc peer: the classes `get_rope` returns, run by their `forward_native` on
the CPU (vllm 0.34.0 on torch 2.15.0; its pins and how it is installed: peers/vllm/README.md).

vllm_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: one row per model dtype (vllm-f32, vllm-bf16,
vllm-f16; peers/peer_driver.py writes the reports). Each test group becomes what a vLLM model
builds from a Hugging Face config: `get_rope(head_size, max_position, is_neox_style,
rope_parameters, dtype)` inside `set_current_vllm_config(VllmConfig(...))` (the CPU device; for
LongRoPE a model config whose max_model_len is the case's seq_len, which is what selects vLLM's
long factors), with rope_parameters the case's Hugging Face fragment (posenc's ntk, which no
Hugging Face rope_type says, as vLLM's own rope_type "ntk"). is_neox_style is the half layout.
The module holds a cos/sin cache (float32, times the attention factor, cast to the dtype) for
positions [0, N), N from max_position as each class sets it: max_position_embeddings for most
(here the group's largest position + 1, up to MAX_CACHE), max_position * factor for linear (here
so that N is that), original * factor for YaRN,
max_position_embeddings = L0 for dynamic NTK (the config's), factor * L0 for LongRoPE.
A forward is `forward_native(positions, query, key)` (LongRoPE's module: its `forward`) with
query of shape (tokens, head_dim); M-RoPE's positions are (3, tokens).

Outputs: rotations; logits (torch.matmul of the rotated q and k in the dtype); table rows as the
cache gives them to the rotation: the rotation of the vector with 1 in each pair's first element
and 0 in its second (y_a = m cos t_i, y_b = m sin t_i, exactly). Not supported: frequencies (the
modules keep only the cache), the backward rotation, positions outside the cache (index_select
refuses them; negative positions), fields get_rope does not read for the rope_type (listed).
"""
import json
import math
import sys
import types

import torch
import vllm
from vllm.config import DeviceConfig, VllmConfig, set_current_vllm_config
from vllm.model_executor.layers import rotary_embedding
from vllm.model_executor.layers.rotary_embedding import get_rope

import peer_driver
from peer_driver import Unsupported

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
# The keys of rope_parameters get_rope passes to each class (vllm/model_executor/layers/rotary_embedding/__init__.py).
READ = {
    "default": set(),
    "linear": {"factor"},
    "ntk": {"factor"},
    "dynamic": {"factor"},
    "yarn": {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
             "attention_factor", "truncate"},
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"},
    # longrope's factor: Phi3LongRoPEScaledRotaryEmbedding takes it as max_position / original.
    "longrope": {"short_factor", "long_factor", "original_max_position_embeddings", "factor"},
    "proportional": set(),
}
# The largest cache built here (positions); a group that needs more is not run (memory).
MAX_CACHE = 1 << 18
_CURRENT = {}  # the modules of the current arguments: {"arguments": get_rope's, dtype: module}


def positions_of(case):
    """The case's positions, each a list of per-axis ints."""
    raw = case.raw
    out = []
    for key in ("position", "qPosition", "kPosition"):
        if key in raw:
            v = raw[key]
            out.append([int(a) for a in v] if isinstance(v, list) else [int(v)])
    return out


class Rope:
    """A group's get_rope arguments, and its module per dtype."""

    def __init__(self, head_dim, max_position, neox, rope_parameters, cache, max_model_len, span):
        self.head_dim, self.max_position, self.neox = head_dim, max_position, neox
        self.rope_parameters, self.cache, self.max_model_len, self.span = rope_parameters, cache, max_model_len, span

    def build(self, dtype, max_position):
        config = VllmConfig(device_config=DeviceConfig(device="cpu"))
        if self.max_model_len is not None:
            # Phi3LongRoPEScaledRotaryEmbedding reads only model_config.max_model_len.
            object.__setattr__(config, "model_config", types.SimpleNamespace(max_model_len=self.max_model_len))
        # get_rope keeps one module per argument set, but LongRoPE's depends on max_model_len too (one
        # engine's, fixed): a module of another group's max_model_len is not this one's.
        rotary_embedding._ROPE_DICT.clear()
        with set_current_vllm_config(config):
            return get_rope(self.head_dim, max_position=max_position, is_neox_style=self.neox,
                            rope_parameters=self.rope_parameters, dtype=dtype)

    def module(self, dtype):
        """The group's module in dtype. Only the modules of the current arguments are kept (the
        driver runs a group's cases together, and a file's groups of the same parameters follow
        each other): caches of up to MAX_CACHE positions for every group and dtype at once would
        not fit in memory."""
        key = (self.head_dim, self.max_position, self.neox, json.dumps(self.rope_parameters, sort_keys=True),
               self.max_model_len)
        if _CURRENT.get("arguments") != key:
            _CURRENT.clear()
            _CURRENT["arguments"] = key
        if dtype not in _CURRENT:
            _CURRENT[dtype] = self.build(dtype, self.max_position)
        return _CURRENT[dtype]

    def class_name(self):
        """The class get_rope picks (it depends on rope_parameters alone): built with a cache of
        two positions."""
        return type(self.build(torch.float32, 2)).__name__

    def rotate(self, x, position, dtype):
        if any(not 0 <= p < self.cache for p in position):
            raise Unsupported(f"a position outside vLLM's cos/sin cache [0, {self.cache}) (index_select)")
        m = self.module(dtype)
        q = torch.as_tensor(x, dtype=torch.float32).to(dtype).reshape(1, -1)
        pos = torch.tensor(position, dtype=torch.int64)
        pos = pos.reshape(-1, 1) if len(position) > 1 else pos
        forward = m.forward if type(m).__name__ == "Phi3LongRoPEScaledRotaryEmbedding" else m.forward_native
        y, _ = forward(pos, q, q.clone())
        return y.reshape(-1)


class Vllm:
    name = "vllm"
    framework = "vLLM (get_rope, forward_native)"
    version = f"{vllm.__version__} (torch {torch.__version__})"
    rows = {"f32": ("f32", "float32"), "bf16": ("bf16", "bfloat16"), "f16": ("f16", "float16")}
    working_format = "f32"  # the cache's angles are float32 in every dtype

    def describe(self, row):
        return f"vllm-{row}: vllm {vllm.__version__} get_rope forward_native (torch {torch.__version__}, CPU), dtype {row}"

    def prepare(self, case, group):
        p = case.params
        s = p["scaling"]
        if p["inverse"]:
            raise Unsupported("the backward rotation: no rope_parameters say it")
        if s["kind"] == "ntk":
            rp = {"rope_type": "ntk", "rope_theta": p["base"], "factor": s["factor"]}
            if p["rotary_dim"] != p["head_dim"]:
                rp["partial_rotary_factor"] = p["rotary_dim"] / p["head_dim"]
            hf = {"head_dim": p["head_dim"], "rope_parameters": rp}
        else:
            hf = case.hf_rope_config()  # raises for invalid parameters
        rp = dict(hf["rope_parameters"])
        rope_type = rp["rope_type"]
        if rope_type not in READ:
            raise Unsupported(f"rope_type '{rope_type}': not in vLLM's get_rope")
        if "partial_rotary_factor" in rp and int(p["head_dim"] * rp["partial_rotary_factor"]) != p["rotary_dim"]:
            raise Unsupported(f"rotary_dim {p['rotary_dim']}: int(head_dim * partial_rotary_factor) differs")
        extra = set(rp) - READ[rope_type] - {"rope_type", "rope_theta", "partial_rotary_factor", "mrope_section"}
        if extra:
            said = ", ".join(f"{k} {rp[k]!r}" for k in sorted(extra))
            raise Unsupported(f"rope_type '{rope_type}' with {said}: not read by vLLM's get_rope for it")
        if "mrope_section" in rp and len(rp["mrope_section"]) != 3:
            raise Unsupported(f"M-RoPE with {len(rp['mrope_section'])} sections: MRotaryEmbedding indexes the "
                              "(3, tokens) positions by section")
        if "mrope_section" in rp and rope_type not in ("default", "yarn"):
            raise Unsupported(f"M-RoPE with {rope_type}: get_rope builds MRotaryEmbedding for default and yarn only")
        if rope_type == "longrope" and p["layout"] != "half":
            raise Unsupported("longrope in the interleaved layout: Phi3LongRoPEScaledRotaryEmbedding refuses it")
        largest = max((max(a) for c in group for a in positions_of(c)), default=0)
        max_model_len = None
        if rope_type == "yarn":
            max_position = int(rp["original_max_position_embeddings"])  # get_rope passes this for yarn
            cache = math.ceil(max_position * float(rp["factor"]))  # torch.arange(max_position * factor)
        elif rope_type == "dynamic":
            if "seq_len" not in s:
                raise Unsupported("dynamic without seq_len: posenc's seq_len has no counterpart in vLLM, whose "
                                  "DynamicNTKScalingRotaryEmbedding takes max_position")
            max_position = cache = int(hf["max_position_embeddings"])  # the config's: L0
        elif rope_type == "longrope":
            extended = float(s["factor"]) * int(rp["original_max_position_embeddings"])
            if extended != int(extended):
                raise Unsupported(f"longrope factor {s['factor']!r}: Phi3LongRoPEScaledRotaryEmbedding takes it as "
                                  "max_position / original_max_position_embeddings, and that product is not an integer")
            max_position = cache = int(extended)
            max_model_len = int(s["seq_len"])
        elif rope_type == "linear":
            # LinearScalingRotaryEmbedding's cache holds max_position * factor positions (t / factor).
            want = min(max(largest, 0) + 1, MAX_CACHE)
            max_position = math.ceil(want / float(rp["factor"]))
            cache = math.ceil(max_position * float(rp["factor"]))
        else:
            max_position = cache = min(max(largest, 0) + 1, MAX_CACHE)
        if cache > MAX_CACHE:
            raise Unsupported(f"a cos/sin cache of {cache} positions: not built here beyond {MAX_CACHE} (memory)")
        span = p["head_dim"] if p["partial"] == "proportional" else p["rotary_dim"]
        return Rope(p["head_dim"], max_position, p["layout"] == "half", rp, cache, max_model_len, span)

    def config(self, case, rope):
        return {"module": rope.class_name(),
                "apply": "forward" if rope.max_model_len is not None else "forward_native",
                "config": {"max_position": rope.max_position, "is_neox_style": rope.neox,
                           "rope_parameters": rope.rope_parameters,
                           **({"max_model_len": rope.max_model_len} if rope.max_model_len else {})},
                "seqLen": case.params["scaling"].get("seq_len")}

    def outputs(self, case, rope, row):
        dtype = DTYPES[row]
        raw = case.raw
        if case.type == "rope_rotate":
            return rope.rotate(case.inputs(row)["x"], positions_of(case)[0], dtype)
        if case.type == "rope_table":
            p = case.params
            n = rope.span
            e = torch.zeros(p["head_dim"])
            first = torch.arange(n // 2) if p["layout"] == "half" else 2 * torch.arange(n // 2)
            second = first + n // 2 if p["layout"] == "half" else first + 1
            e[first] = 1.0
            y = rope.rotate(e, positions_of(case)[0], dtype)
            return torch.cat([y[first], y[second]])
        if case.type == "rope_dot":
            v = case.inputs(row)
            pos = positions_of(case)
            q = rope.rotate(v["q"], pos[0], dtype)
            k = rope.rotate(v["k"], pos[1], dtype)
            return torch.matmul(q[None, :], k[:, None]).reshape(-1)
        raise Unsupported(f"{case.type}: vLLM's modules keep only the cos/sin cache, no frequencies")


if __name__ == "__main__":
    peer_driver.run(Vllm(), *sys.argv[1:])
