"""ONNX Runtime's fused attention with RoPE inside, as a posenc attention peer (CPU execution provider).

Two ops, each in a small model built with onnx.helper:
- `gqa`: com.microsoft GroupQueryAttention with do_rotary=1 (the contrib op ORT's model builders
  emit for Llama-style decoders: RoPE, GQA and the KV cache in one node). Attributes num_heads,
  kv_num_heads, scale (a float attribute: the case's scale rounded to float32), do_rotary,
  rotary_interleaved (posenc's interleaved layout). Inputs query [1, S, H·d], key and value
  [1, S, G·d] (the new tokens), past_key/past_value [1, G, P, d] (BNSH), seqlens_k [1] int32
  (total length - 1), total_sequence_length (int32 scalar), cos_cache/sin_cache [rows,
  rotary_dim/2]. The op rotates the new tokens' q and k with the cache rows of their slots in the
  sequence (past length + i) and is causal. A case runs as a model runs it: a first call (the
  prompt) with the keys before the queries' tokens, whose present_key/present_value (k rotated by
  the op) come back as the second call's past_key/past_value, then the token call with the queries
  and their own keys and values (the case's last n_q keys, whose positions must be the queries').
  Cache row j holds the angle of the case's key j (as the RotaryEmbedding peer maps positions to
  rows), so any position is reached without a cache of 2^31 rows.
- `attention23`: the ONNX opset-23 Attention op after two opset-23 RotaryEmbedding nodes (q and k,
  each with its own cache rows and position_ids 0..n-1), inputs 3-D with q_num_heads and
  kv_num_heads, the mask a boolean attn_mask [n_q, n_k] (posenc's bottom-right causal or the
  explicit mask; the op's is_causal aligns top-left), scale the float attribute.
Cache rows (peers/onnxruntime/ort_peer.py, the RotaryEmbedding peer's two ways, shared):
`framework` (float32 with torch as transformers and ORT's model builders compute them; RoPE
scalings none and linear) and `accurate` (the reference's certified rows, every scaling).
Storage: f32 and f16 (the ops' T on the CPU provider; f64 and bf16 have no CPU kernel).
Neither op outputs L: O is judged alone. Unsupported: ALiBi (no slope input; GQA's attention_bias
would be the caller's bias), given tables, value_dim other than head_dim (GQA), masks other than
causal (GQA), queries not at the last keys' positions (GQA).
"""
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import attention_driver
from attention_driver import Row, Unsupported
from ort_peer import accurate_rows, framework_rows, span_of

ONNX_TYPE = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16}
NUMPY = {"f32": np.float32, "f16": np.float16}
_SESSIONS = {}
# The accurate cache's rows come one `posenc eval rope` process each: a case of more tokens is left
# to the framework cache's row (listed unsupported in the accurate one).
MAX_CERTIFIED_ROWS = 256


def session(model):
    key = model.SerializeToString()
    if key not in _SESSIONS:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        _SESSIONS[key] = ort.InferenceSession(key, options, providers=["CPUExecutionProvider"])
    return _SESSIONS[key]


def finish(graph, opsets):
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model


def gqa_model(fmt, p, scale, rotary):
    t, d, H, G = ONNX_TYPE[fmt], p["head_dim"], p["query_heads"], p["kv_heads"]
    span = span_of(p["rope"]) if rotary else 2
    inputs = [helper.make_tensor_value_info("query", t, [1, None, H * d]),
              helper.make_tensor_value_info("key", t, [1, None, G * d]),
              helper.make_tensor_value_info("value", t, [1, None, G * d]),
              helper.make_tensor_value_info("past_key", t, [1, G, None, d]),
              helper.make_tensor_value_info("past_value", t, [1, G, None, d]),
              helper.make_tensor_value_info("seqlens_k", TensorProto.INT32, [1]),
              helper.make_tensor_value_info("total_sequence_length", TensorProto.INT32, []),
              helper.make_tensor_value_info("cos_cache", t, [None, span // 2]),
              helper.make_tensor_value_info("sin_cache", t, [None, span // 2])]
    names = [i.name for i in inputs] if rotary else [i.name for i in inputs[:7]]
    attrs = {"num_heads": H, "kv_num_heads": G, "scale": scale, "do_rotary": int(rotary)}
    if rotary:
        attrs["rotary_interleaved"] = int(p["rope"]["layout"] == "interleaved")
    node = helper.make_node("GroupQueryAttention", names, ["output", "present_key", "present_value"],
                            domain="com.microsoft", **attrs)
    outputs = [helper.make_tensor_value_info("output", t, [1, None, H * d]),
               helper.make_tensor_value_info("present_key", t, [1, G, None, d]),
               helper.make_tensor_value_info("present_value", t, [1, G, None, d])]
    graph = helper.make_graph([node], "gqa", inputs[:len(names)], outputs)
    return finish(graph, [helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])


def attention23_model(fmt, p, scale, rotary):
    t, d, dv, H, G = ONNX_TYPE[fmt], p["head_dim"], p["value_dim"], p["query_heads"], p["kv_heads"]
    inputs = [helper.make_tensor_value_info("q", t, [1, None, H * d]),
              helper.make_tensor_value_info("k", t, [1, None, G * d]),
              helper.make_tensor_value_info("v", t, [1, None, G * dv]),
              helper.make_tensor_value_info("mask", TensorProto.BOOL, [None, None])]
    nodes, q, k = [], "q", "k"
    if rotary:
        span = span_of(p["rope"])
        attrs = {"interleaved": int(p["rope"]["layout"] == "interleaved")}
        if span != d:
            attrs["rotary_embedding_dim"] = span
        for side, heads in (("q", H), ("k", G)):
            inputs += [helper.make_tensor_value_info(f"{side}_cos", t, [None, span // 2]),
                       helper.make_tensor_value_info(f"{side}_sin", t, [None, span // 2]),
                       helper.make_tensor_value_info(f"{side}_pos", TensorProto.INT64, [1, None])]
            nodes.append(helper.make_node("RotaryEmbedding", [side, f"{side}_cos", f"{side}_sin", f"{side}_pos"],
                                          [f"{side}_rot"], num_heads=heads, **attrs))
        q, k = "q_rot", "k_rot"
    nodes.append(helper.make_node("Attention", [q, k, "v", "mask"], ["o"], q_num_heads=H, kv_num_heads=G,
                                  scale=scale))
    graph = helper.make_graph(nodes, "attention23", inputs, [helper.make_tensor_value_info("o", t, [1, None, H * dv])])
    return finish(graph, [helper.make_opsetid("", 23)])


class OrtAttentionPeer:
    name = "ort_attention"
    OPS = ("gqa", "attention23")
    CACHES = ("framework", "accurate")

    def __init__(self, cli):
        self.cli = cli
        version = f"onnxruntime {ort.__version__}, onnx {onnx.__version__}"
        what = {"gqa": "com.microsoft GroupQueryAttention (do_rotary)",
                "attention23": "opset-23 Attention after RotaryEmbedding"}
        # The opset-23 Attention's CPU kernel keeps the scores and probabilities in T
        # (AttentionBase<T>::ApplyAttention: ComputeAttentionProbs<T> into a T buffer, then
        # math::MatMul<T> of the probabilities by V): in f16 both are rounded to f16, declared.
        # GroupQueryAttention converts f16 to float32 and declares nothing.
        rounded = {("attention23", "f16"): "f16"}
        self.rows = {f"{op}-{cache}-{fmt}": Row(fmt=fmt, framework=f"ONNX Runtime {what[op]}, {cache} cos/sin cache",
                                                version=version, dtype=fmt,
                                                score_format=rounded.get((op, fmt)),
                                                probability_format=rounded.get((op, fmt)),
                                                describe=f"onnxruntime {ort.__version__} {what[op]}, {cache} cache, CPU, {fmt}")
                     for op in self.OPS for cache in self.CACHES for fmt in ("f32", "f16")}

    def rows_of(self, case, cache, fmt, positions):
        rope = case.params["rope"]
        why = None
        if cache == "framework":
            if rope["scaling"]["kind"] not in ("none", "linear"):
                why = f"scaling {rope['scaling']['kind']}: its framework-way cache is transformers' (the transformers peer)"
            elif rope.get("mrope_section") or rope["partial"] == "proportional":
                why = "M-RoPE and proportional: their framework-way caches are transformers'"
        if why:
            raise Unsupported(why)
        if cache == "accurate" and len(positions) > MAX_CERTIFIED_ROWS:
            raise Unsupported(f"more than {MAX_CERTIFIED_ROWS} tokens: each certified cache row is one `posenc eval "
                              "rope` process (the framework cache row runs it)")
        axes = [pos if rope.get("mrope_section") else pos[0] for pos in positions]
        if cache == "framework":
            return framework_rows(rope, axes, fmt)
        return accurate_rows(self.cli, rope, axes, fmt)

    def attend(self, case, row):
        op, cache, fmt = row.split("-")
        p = case.params
        if p.get("rope_table_given"):
            raise Unsupported("a given cos/sin table: the op takes a cache, and the case's rows are already rotated-by "
                              "inputs of another layout")
        if "alibi" in p:
            raise Unsupported("ALiBi: the op has no slopes; a bias would be the caller's")
        if "rope" in p and p["rope"]["inverse"]:
            raise Unsupported("the backward rotation")
        rotary = "rope" in p
        scale = float(np.float32(attention_driver.softmax_scale(case)))
        inputs = case.inputs(fmt)
        q, k, v = (np.asarray(inputs[n], dtype=NUMPY[fmt]) for n in ("q", "k", "v"))
        nq, nk = q.shape[0], k.shape[0]
        pos = case.positions()
        if op == "gqa":
            return self.gqa(case, cache, fmt, q, k, v, scale, rotary, pos), None
        return self.attention23(case, cache, fmt, q, k, v, scale, rotary, pos), None

    def gqa(self, case, cache, fmt, q, k, v, scale, rotary, pos):
        p = case.params
        nq, nk, d, G = q.shape[0], k.shape[0], p["head_dim"], p["kv_heads"]
        if p["mask"] != "causal":
            raise Unsupported(f"mask {p['mask']}: GroupQueryAttention is causal")
        if p["value_dim"] != p["head_dim"]:
            raise Unsupported("value_dim other than head_dim: GroupQueryAttention has one head_size")
        if list(pos["queryPositions"]) != list(pos["keyPositions"][nk - nq:]):
            raise Unsupported("queries not at the last keys' positions: GroupQueryAttention appends the queries' own "
                              "keys to the cache")
        s = session(gqa_model(fmt, p, scale, rotary))
        feeds = {}
        if rotary:
            feeds["cos_cache"], feeds["sin_cache"] = self.rows_of(case, cache, fmt, pos["keyPositions"])
        past_k = np.zeros((1, G, 0, d), dtype=NUMPY[fmt])
        past_v = np.zeros_like(past_k)
        prompt = nk - nq
        if prompt > 0:  # the prompt's call: its queries' outputs are not the case's
            zeros = np.zeros((1, prompt, p["query_heads"] * d), dtype=NUMPY[fmt])
            _, past_k, past_v = s.run(None, {**feeds, "query": zeros, "key": k[:prompt].reshape(1, prompt, -1),
                                             "value": v[:prompt].reshape(1, prompt, -1), "past_key": past_k,
                                             "past_value": past_v, "seqlens_k": np.array([prompt - 1], np.int32),
                                             "total_sequence_length": np.array(prompt, np.int32)})
        o, _, _ = s.run(None, {**feeds, "query": q.reshape(1, nq, -1), "key": k[prompt:].reshape(1, nq, -1),
                               "value": v[prompt:].reshape(1, nq, -1), "past_key": past_k, "past_value": past_v,
                               "seqlens_k": np.array([nk - 1], np.int32),
                               "total_sequence_length": np.array(nk, np.int32)})
        return o.reshape(nq, p["query_heads"], p["value_dim"])

    def attention23(self, case, cache, fmt, q, k, v, scale, rotary, pos):
        p = case.params
        nq, nk = q.shape[0], k.shape[0]
        s = session(attention23_model(fmt, p, scale, rotary))
        feeds = {"q": q.reshape(1, nq, -1), "k": k.reshape(1, nk, -1), "v": v.reshape(1, nk, -1),
                 "mask": attention_driver.visible(case)}
        if rotary:
            feeds["q_cos"], feeds["q_sin"] = self.rows_of(case, cache, fmt, pos["queryPositions"])
            feeds["k_cos"], feeds["k_sin"] = self.rows_of(case, cache, fmt, pos["keyPositions"])
            feeds["q_pos"] = np.arange(nq, dtype=np.int64)[None]
            feeds["k_pos"] = np.arange(nk, dtype=np.int64)[None]
        o = s.run(None, feeds)[0]
        return o.reshape(nq, p["query_heads"], p["value_dim"])


def main():
    """ort_attention_peer.py POSENC_CLI OUTDIR PROFILE [FILTER]"""
    cli, out, profile = sys.argv[1:4]
    filter_ = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    attention_driver.run(OrtAttentionPeer(cli), cli, out, profile, filter_)


if __name__ == "__main__":
    main()
