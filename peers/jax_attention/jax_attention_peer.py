"""JAX's dot_product_attention after keras-hub's RoPE, as a posenc attention peer (CPU).

What runs, all of it the frameworks' own code:
- RoPE: the keras-hub rotary layer that the keras RoPE peer builds for the case's rope
  (peers/keras/keras_peer.py, Keras.prepare: RotaryEmbedding, LlamaRotaryEmbedding or
  Phi3SuScaledRotaryEmbedding on Keras's JAX backend), called on [1, tokens, heads, head_dim]
  arrays of the dtype with start_index the first token's position, once per run of consecutive
  positions, as keras-hub's attention layers call it;
- attention: jax.nn.dot_product_attention(q, k, v, mask=..., scale=..., implementation="xla") on
  [1, tokens, heads, dim] arrays of the dtype, the KV heads grouped by the call itself (N a
  multiple of K); the mask a boolean [queries, keys] (True: attend), bottom-right causal as
  posenc defines it. scale: the case's (attention_driver.softmax_scale).

The declared formats (jax 0.10.2, jax/_src/nn/functions.py, `_dot_product_attention_core`): the
logits are an einsum with preferred_element_type float32 (BF16_BF16_F32 or F16_F16_F32), scaled
and masked in float32, the softmax in float32, then `probs.astype(key.dtype)` before the P·V
einsum: P declared bf16 or f16, S not rounded.

Returns O only (the public call gives no L). Not supported: ALiBi (JAX takes a bias, and neither
JAX nor keras-hub's attention layers build ALiBi's), given cos/sin tables, and the rope keras-hub
has no layer for (the keras peer's reasons).
"""
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "jax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402

import attention_driver  # noqa: E402
from attention_driver import Row, Unsupported  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "keras"))
import keras_peer  # noqa: E402  (the keras RoPE peer's layers)

DTYPES = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}
PROBABILITIES = {"f32": None, "bf16": "bf16", "f16": "f16"}


class RopeCase:
    """What Keras.prepare reads of a RoPE case: its params."""

    def __init__(self, params):
        self.params = params


def runs(positions):
    """[(first, last + 1)] index ranges of consecutive positions."""
    out, first = [], 0
    for i in range(1, len(positions) + 1):
        if i == len(positions) or positions[i] != positions[i - 1] + 1:
            out.append((first, i))
            first = i
    return out


def rotate(layer, x, positions, row):
    """x [tokens, heads, dim] rotated at positions by the keras-hub layer, in the row's dtype."""
    if not positions:
        return x
    parts = []
    for a, b in runs(positions):
        try:
            y = layer.rotate_tokens(np.asarray(x[a:b], dtype=np.float32)[None], positions[a], keras_peer.DTYPES[row])
        except keras_peer.Unsupported as e:
            raise Unsupported(str(e)) from None
        parts.append(jnp.asarray(y)[0])
    return jnp.concatenate(parts, axis=0)


class JaxAttention:
    name = "jax_attention"

    def __init__(self):
        version = f"jax {jax.__version__}, keras-hub {keras_hub.__version__}"
        self.rows = {fmt: Row(fmt=fmt, framework="jax.nn.dot_product_attention after keras-hub RoPE", version=version,
                              dtype=str(np.dtype(DTYPES[fmt]).name), probability_format=PROBABILITIES[fmt],
                              describe=f"jax.nn.dot_product_attention (xla), {version}, CPU, dtype {fmt}")
                     for fmt in DTYPES}

    def attend(self, case, row):
        p = case.params
        if "alibi" in p:
            raise Unsupported("ALiBi: jax.nn.dot_product_attention takes a bias, and neither JAX nor keras-hub's "
                              "attention layers build ALiBi's")
        if p.get("rope_table_given"):
            raise Unsupported("a given cos/sin table: keras-hub's layers compute their own")
        if p["value_dim"] != p["head_dim"]:
            # jax.nn.dot_product_attention checks value against key's shape [B, S, K, H]
            raise Unsupported(f"value_dim {p['value_dim']} != head_dim {p['head_dim']}: dot_product_attention takes "
                              "values of the keys' head size")
        dtype = DTYPES[row]
        q, k, v = (jnp.asarray(t, dtype=dtype) for t in (case.q(row), case.k(row), case.v(row)))
        if "rope" in p:
            try:
                layer = keras_peer.Keras().prepare(RopeCase(p["rope"]), None)
            except keras_peer.Unsupported as e:
                raise Unsupported(str(e)) from None
            pos = case.positions()
            q = rotate(layer, q, [t[0] for t in pos["queryPositions"]], row)
            k = rotate(layer, k, [t[0] for t in pos["keyPositions"]], row)
        mask = jnp.asarray(attention_driver.visible(case))[None, None]
        o = jax.nn.dot_product_attention(q[None], k[None], v[None], mask=mask, scale=attention_driver.softmax_scale(case),
                                          implementation="xla")
        return np.asarray(o[0].astype(jnp.float32)), None  # [nq, H, dv]


def main():
    """jax_attention_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]"""
    cli, out, profile = sys.argv[1:4]
    filter_ = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    attention_driver.run(JaxAttention(), cli, out, profile, filter_)


if __name__ == "__main__":
    main()
