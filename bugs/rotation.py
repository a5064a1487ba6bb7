"""The rotation of one head by per-pair cos and sin, in float32, the way the framework paths write
it: transformers' `q * cos + rotate_half(q) * sin` (models/llama/modeling_llama.py,
apply_rotary_pos_emb) and GPT-J's `rotate_every_two` (models/gptj/modeling_gptj.py), vLLM's
`apply_rotary_emb_torch` (model_executor/layers/rotary_embedding/common.py) for the neox and GPT-J
styles. All of them compute, per pair (a, b), y_a = x_a c - x_b s and y_b = x_b c + x_a s with each
product and the sum rounded to the format: binary32 here."""
import numpy as np

from floats import f32


def pair_indices(span, layout):
    """Elements (a, b) of each pair of a rotated span: `half` pairs i with i + span/2 (GPT-NeoX,
    rotate_half), `interleaved` pairs 2i with 2i + 1 (GPT-J, rotate_every_two)."""
    h = span // 2
    i = np.arange(h)
    if layout == "half":
        return i, i + h
    if layout == "interleaved":
        return 2 * i, 2 * i + 1
    raise ValueError(f"layout {layout!r}: must be half or interleaved")


def rotate(x, cos, sin, span, layout):
    """x (head_dim values) with its first `span` elements rotated pair by pair; the rest copied."""
    y = f32(x).copy()
    a, b = pair_indices(span, layout)
    xa, xb = y[a], y[b]
    c, s = f32(cos), f32(sin)
    with np.errstate(over="ignore", invalid="ignore"):  # inputs near float32's largest overflow, as in float32 code
        y[a] = xa * c - xb * s
        y[b] = xb * c + xa * s
    return y


def rotate_half_table_interleaved(x, cos, sin, span):
    """A table built for the half layout (cos = cat(c, c), as LlamaRotaryEmbedding builds it)
    applied with a GPT-J interleaved rotate: element j takes the angle of pair j mod span/2 and is
    mixed with its interleaved neighbour. Not a rotation at all (transformers #47328)."""
    y = f32(x).copy()
    c = np.concatenate([f32(cos), f32(cos)])
    s = np.concatenate([f32(sin), f32(sin)])
    rot = np.empty(span, dtype=np.float32)
    rot[0::2] = -y[1:span:2]
    rot[1::2] = y[0:span:2]
    y[:span] = y[:span] * c + rot * s
    return y
