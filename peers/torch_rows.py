"""What the torch-module peers (torchtune, rotary_embedding_torch) share: their rows (one per
model dtype), the table of a rotation module as the rotation forms it, and the outputs of a case."""
import torch

from peer_driver import Unsupported

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
ROWS = {"f32": ("f32", "float32"), "bf16": ("bf16", "bfloat16"), "f16": ("f16", "float16")}


def position(v):
    """A case's one-axis position as an int (several axes: the caller's Unsupported)."""
    axes = v if isinstance(v, list) else [v]
    if len(axes) != 1:
        return None
    return int(axes[0])


def table_by_rotation(rotate, params):
    """[m cos t_i..., m sin t_i...] over the rotated span's pairs as `rotate(x)` forms them: the
    rotation of the vector with 1 in each pair's first element and 0 in its second gives y_a =
    m cos t_i, y_b = m sin t_i exactly (x_a cos - x_b sin with x_b = 0)."""
    n = params["rotary_dim"]
    e = torch.zeros(params["head_dim"])
    first = torch.arange(n // 2) if params["layout"] == "half" else 2 * torch.arange(n // 2)
    second = first + n // 2 if params["layout"] == "half" else first + 1
    e[first] = 1.0
    y = rotate(e)
    return torch.cat([y[first], y[second]])


def outputs(case, row, rotate, frequencies, buffer_name):
    """A case's outputs from a peer that rotates one vector at one position, `rotate(x, position,
    dtype)`, and whose `frequencies()` gives [inv_freq..., 1] from its float32 buffer named
    `buffer_name` (asked in the f32 row alone: the modules keep it in float32 whatever the dtype)."""
    dtype = DTYPES[row]
    raw = case.raw
    pos = {k: position(raw[k]) for k in ("position", "qPosition", "kPosition") if k in raw}
    if None in pos.values():
        raise Unsupported("a position of several axes")
    if case.type == "rope_frequencies":
        if row != "f32":
            raise Unsupported(f"frequencies in {row}: {buffer_name} is float32 whatever the dtype (judged in the f32 row)")
        return frequencies()
    if case.type == "rope_rotate":
        return rotate(case.inputs(row)["x"], pos["position"], dtype)
    if case.type == "rope_table":
        return table_by_rotation(lambda e: rotate(e, pos["position"], dtype), case.params)
    if case.type == "rope_dot":
        v = case.inputs(row)
        q, k = rotate(v["q"], pos["qPosition"], dtype), rotate(v["k"], pos["kPosition"], dtype)
        return torch.matmul(q[None, :], k[:, None]).reshape(-1)
    raise Unsupported(f"case type {case.type}")
