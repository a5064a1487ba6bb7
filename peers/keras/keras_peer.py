"""keras-hub's RotaryEmbedding layers on Keras's JAX backend as a posenc peer (CPU).

keras_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]: one row per layer dtype policy (keras-f32,
keras-bf16, keras-f16; peers/peer_driver.py writes the reports). Each test group becomes the
layer keras-hub's models build (keras-hub 0.32.0, keras 3.15.1, jax 0.10.2), called on x of shape
(batch 1, tokens, heads 1, head_dim) with `start_index` the first token's position:
- `keras_hub.layers.RotaryEmbedding(max_wavelength=base, scaling_factor=..., rope_type=...)`:
  rope_type "linear" for none (factor 1) and linear, "yarn" (factor, beta_fast, beta_slow,
  original_max_position_embeddings, truncate; GPT-OSS's attention builds it so), and "dynamic"
  for posenc's ntk (the layer's static NTK-style scaling: it reads a factor and no seq_len; see
  SPEC.md 2.4.3 for what it computes);
- `LlamaRotaryEmbedding` (keras_hub/src/models/llama) for llama3: frequency_adjustment_factor,
  low_freq_factor, high_freq_factor, pretraining_sequence_length;
- `Phi3SuScaledRotaryEmbedding` (keras_hub/src/models/phi3) for longrope: short and long factors,
  max_sequence_length = factor * L0, pretraining_sequence_length = L0; it takes the long factors
  when start_index + tokens > L0, so the forward has seq_len - position tokens (the case's x first).
Standard partial rotary: the layer rotates x[..., :rotary_dim] and the rest is copied, as
GPT-NeoX's attention in keras-hub does it; proportional: Gemma 4's attention
(`Gemma4TextAttention._apply_rope` with its RotaryEmbedding(denominator_dim=head_dim)).
The layers' rotation is the half layout only (`_apply_rotary_pos_emb` splits x in two halves).

Outputs: rotations; table rows as the attention applies them (the rotation of the vector with 1
in each pair's first element and 0 in its second: y_a = m cos t_i, y_b = m sin t_i, exactly);
logits (keras.ops.matmul of the rotated q and k in the dtype); frequencies in the f32 row: the
layer's `_get_inverse_freq` (float32) and the attention factor as the layer applies it (the table
at position 0: cos 0 = 1 times the factor). Not supported: the interleaved layout, the
backward rotation, dynamic NTK (no keras-hub layer takes a seq_len), M-RoPE, config fields a
layer has no argument for (listed).
"""
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
from keras import ops  # noqa: E402
from keras_hub.layers import RotaryEmbedding  # noqa: E402
from keras_hub.src.models.gemma4.gemma4_attention import Gemma4TextAttention  # noqa: E402
from keras_hub.src.models.llama.llama_rotary_embedding import LlamaRotaryEmbedding  # noqa: E402
from keras_hub.src.models.phi3.phi3_rotary_embedding import Phi3SuScaledRotaryEmbedding  # noqa: E402

import jax  # noqa: E402
import peer_driver  # noqa: E402
from peer_driver import Unsupported  # noqa: E402

DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}
# The posenc scaling fields each layer has an argument for.
READ = {
    "none": set(),
    "linear": {"factor"},
    "ntk": {"factor"},
    "yarn": {"factor", "original_max_positions", "beta_fast", "beta_slow", "truncate"},
    "llama3": {"factor", "low_freq_factor", "high_freq_factor", "original_max_positions"},
    "longrope": {"factor", "original_max_positions", "short_factor", "long_factor", "seq_len"},
}
MAX_ROWS = 16384  # longrope's forward of seq_len - position tokens is not run beyond this (memory)


class Layer:
    """A test group's layer in each dtype, and how the attention applies it."""

    def __init__(self, kind, kwargs, rotary_dim, head_dim, partial, seq_len):
        self.kind, self.kwargs, self.rotary_dim, self.head_dim = kind, kwargs, rotary_dim, head_dim
        self.partial, self.seq_len = partial, seq_len
        self.layers = {}

    def layer(self, dtype):
        if dtype not in self.layers:
            cls = {"RotaryEmbedding": RotaryEmbedding, "LlamaRotaryEmbedding": LlamaRotaryEmbedding,
                   "Phi3SuScaledRotaryEmbedding": Phi3SuScaledRotaryEmbedding}[self.kind]
            self.layers[dtype] = cls(dtype=dtype, **self.kwargs)
        return self.layers[dtype]

    def rotate_tokens(self, x, start, dtype):
        """x (1, tokens, heads, head_dim), float32, at the consecutive positions start, start + 1, ...,
        rotated in dtype as the attention applies the layer."""
        tokens = x.shape[1]
        rows = tokens
        if self.kind == "Phi3SuScaledRotaryEmbedding":
            # The layer takes the long factors when start_index + tokens > L0: the forward has
            # seq_len - start tokens, x's first.
            rows = self.seq_len - start
            if not tokens <= rows <= MAX_ROWS:
                raise Unsupported(f"longrope at seq_len - position outside [{tokens}, {MAX_ROWS}]: the forward whose "
                                  "start_index + tokens make the case's seq_len is not run here (memory)")
        a = np.zeros((1, rows) + x.shape[2:], dtype=np.float32)
        a[:, :tokens] = x
        t = ops.cast(ops.convert_to_tensor(a), dtype)
        layer = self.layer(dtype)
        if self.partial == "proportional":
            # Gemma 4's attention: rotary_dim/2 elements of each head_dim/2 half, with its layer.
            attention = Gemma4TextAttention.__new__(Gemma4TextAttention)
            attention.rotary_dim, attention.head_dim, attention.rope_layer = self.rotary_dim, self.head_dim, layer
            y = Gemma4TextAttention._apply_rope(attention, t, start)
        elif self.rotary_dim < self.head_dim:
            # GPT-NeoX's attention: the first rotary_dim elements rotated, the rest copied.
            n = self.rotary_dim
            y = ops.concatenate([layer(t[..., :n], start_index=start), t[..., n:]], axis=-1)
        else:
            y = layer(t, start_index=start)
        return y[:, :tokens]

    def rotate(self, x, position, dtype):
        return self.rotate_tokens(np.asarray(x, dtype=np.float32).reshape(1, 1, 1, -1), position, dtype)[0, 0, 0]

    def table(self, position, dtype):
        """[m cos t_i..., m sin t_i...] over the span's pairs as the attention applies them: the
        rotation of the vector with 1 in each pair's first element and 0 in its second (y_a = m cos
        t_i, y_b = m sin t_i, exactly), so that proportional RoPE's copied pairs are Gemma 4's."""
        n = self.head_dim if self.partial == "proportional" else self.rotary_dim
        e = np.zeros(self.head_dim, dtype=np.float32)
        e[: n // 2] = 1.0
        y = numpy(self.rotate(e, position, dtype))
        return np.concatenate([y[: n // 2], y[n // 2: n]])


def numpy(t):
    a = np.asarray(t)
    return a.astype(np.float32) if a.dtype.name == "bfloat16" else a


class Keras:
    name = "keras"
    framework = "keras-hub RotaryEmbedding (Keras, JAX backend)"
    version = f"keras-hub {keras_hub.__version__}, keras {keras.__version__}, jax {jax.__version__}"
    rows = {"f32": ("f32", "float32"), "bf16": ("bf16", "bfloat16"), "f16": ("f16", "float16")}
    working_format = "f32"  # the layers form their angles in float32 in every dtype policy

    def describe(self, row):
        return f"keras-{row}: {self.version}, CPU, dtype policy {DTYPES[row]}"

    def prepare(self, case, group):
        p = case.params
        s = p["scaling"]
        if p["layout"] != "half":
            raise Unsupported("the interleaved layout: keras-hub's RotaryEmbedding rotates halves only")
        if p["inverse"]:
            raise Unsupported("the backward rotation: no layer argument says it")
        if p.get("mrope_section"):
            raise Unsupported("M-RoPE: keras-hub's text layers take one position per token")
        if s["kind"] == "dynamic":
            raise Unsupported("dynamic NTK: no keras-hub layer takes a seq_len (its rope_type 'dynamic' is static; "
                              "it runs posenc's ntk)")
        if p["partial"] == "proportional" and s["kind"] != "none":
            raise Unsupported(f"proportional with scaling {s['kind']}: Gemma 4's attention builds a plain layer")
        extra = set(s) - {"kind"} - READ[s["kind"]]
        if s["kind"] == "yarn" and s.get("truncate") is None:
            extra.discard("truncate")
        if extra:
            said = ", ".join(f"{k} {s[k]!r}" for k in sorted(extra))
            raise Unsupported(f"scaling {s['kind']} with {said}: no argument of keras-hub's layer says it")
        base = float(p["base"])
        kwargs = {"max_wavelength": base}
        kind = "RotaryEmbedding"
        seq_len = None
        if s["kind"] in ("none", "linear", "ntk"):
            kwargs.update(scaling_factor=float(s.get("factor", 1.0)),
                          rope_type="dynamic" if s["kind"] == "ntk" else "linear")
        elif s["kind"] == "yarn":
            kwargs.update(rope_type="yarn", scaling_factor=float(s["factor"]),
                          original_max_position_embeddings=int(s["original_max_positions"]),
                          beta_fast=float(s.get("beta_fast", 32.0)), beta_slow=float(s.get("beta_slow", 1.0)),
                          truncate=bool(s.get("truncate", True)))
        elif s["kind"] == "llama3":
            kind = "LlamaRotaryEmbedding"
            kwargs.update(frequency_adjustment_factor=float(s["factor"]), low_freq_factor=float(s["low_freq_factor"]),
                          high_freq_factor=float(s["high_freq_factor"]),
                          pretraining_sequence_length=int(s["original_max_positions"]))
        elif s["kind"] == "longrope":
            kind = "Phi3SuScaledRotaryEmbedding"
            original = int(s["original_max_positions"])
            kwargs.update(inverese_freq_short_factor=[float(v) for v in s["short_factor"]],
                          inverese_freq_long_factor=[float(v) for v in s["long_factor"]],
                          max_sequence_length=float(s["factor"]) * original, pretraining_sequence_length=original)
            seq_len = int(s["seq_len"])
        if p["partial"] == "proportional":
            kwargs["denominator_dim"] = p["head_dim"]
        return Layer(kind, kwargs, p["rotary_dim"], p["head_dim"], p["partial"], seq_len)

    def config(self, case, layer):
        apply = {"proportional": "Gemma4TextAttention._apply_rope"}.get(layer.partial, "RotaryEmbedding.call")
        return {"module": layer.kind, "apply": apply, "config": layer.kwargs, "seqLen": layer.seq_len}

    def outputs(self, case, layer, row):
        dtype = DTYPES[row]
        raw = case.raw
        if case.type == "rope_frequencies":
            if row != "f32":
                raise Unsupported(f"frequencies in {row}: the layers keep them in float32 (judged in the f32 row)")
            if layer.kind == "Phi3SuScaledRotaryEmbedding" or layer.partial == "proportional":
                raise Unsupported(f"frequencies of {layer.kind} ({layer.partial}): formed inside the cos/sin "
                                  "computation, not by _get_inverse_freq")
            inv = numpy(layer.layer(dtype)._get_inverse_freq(layer.rotary_dim))
            return np.concatenate([inv.astype(np.float32), layer.table(0, dtype)[:1]])
        if case.type == "rope_table":
            return layer.table(position(raw["position"]), dtype)
        if case.type == "rope_rotate":
            return numpy(layer.rotate(case.inputs(row)["x"], position(raw["position"]), dtype))
        if case.type == "rope_dot":
            v = case.inputs(row)
            q = layer.rotate(v["q"], position(raw["qPosition"]), dtype)
            k = layer.rotate(v["k"], position(raw["kPosition"]), dtype)
            return numpy(ops.matmul(q[None, :], k[:, None]).reshape(-1))
        raise Unsupported(f"case type {case.type}")


def position(v):
    axes = v if isinstance(v, list) else [v]
    if len(axes) != 1:
        raise Unsupported("a position of several axes")
    return int(axes[0])


if __name__ == "__main__":
    peer_driver.run(Keras(), *sys.argv[1:])
