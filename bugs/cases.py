"""Reading posenc's vector files (conformance/SPEC.md section 4) and turning one RoPE or ALiBi
implementation into the outputs of their cases: the part every framework style shares.

A style is an object with, for RoPE, `frequencies()` -> (inv_freq per pair, attention factor),
`cos_sin(position_of_pair)` -> (m cos t_i, m sin t_i) per pair and `rotate(x, position_of_pair)`;
for ALiBi, `slopes()` and `bias(head, query, key)`. A case it cannot express raises Unsupported
and is left out of the results file (posenc counts it as not judged)."""
import functools
import json
import os

import numpy as np


class Unsupported(Exception):
    """The style has no way to express this case (posenc reports it as not judged)."""


@functools.lru_cache(maxsize=None)
def load(vectors_dir, file):
    """A vector file, parsed once per process (callers only read it)."""
    with open(os.path.join(vectors_dir, file)) as f:
        return json.load(f)


def reals(texts):
    """Hex-float strings (C99 %a, or Python's float.hex) to float64."""
    return np.array([float.fromhex(t) for t in texts], dtype=np.float64)


def real(text):
    return float.fromhex(text) if isinstance(text, str) else float(text)


def positions(texts):
    return [int(t) for t in texts]


def exact_in_f32(values):
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        return bool(np.all(v.astype(np.float32).astype(np.float64) == v))


def pair_positions(params, axes):
    """The position each rotated pair takes: with M-RoPE (mrope_section, SPEC 2.3) pair i takes the
    axis whose section holds i; otherwise every pair takes the one axis."""
    sections = params.get("mrope_section") or []
    if not sections:
        return None, axes[0]
    owner = []
    for axis, size in enumerate(sections):
        owner += [axis] * size
    return owner, axes


def rope_outputs(style, ctype, test):
    """The outputs of one RoPE case (SPEC 4: rope_frequencies, rope_table, rope_rotate, rope_dot),
    float32 values."""
    if ctype == "rope_frequencies":
        inv_freq, m = style.frequencies()
        return list(inv_freq) + [np.float32(m)]
    if ctype == "rope_table":
        cos, sin = style.cos_sin(positions(test["position"]))
        return list(cos) + list(sin)
    if ctype == "rope_rotate":
        return list(style.rotate(reals(test["x"]), positions(test["position"])))
    if ctype == "rope_dot":
        q = style.rotate(reals(test["q"]), positions(test["qPosition"]))
        k = style.rotate(reals(test["k"]), positions(test["kPosition"]))
        return [np.dot(q, k)]  # float32 operands: numpy's float32 dot, as a float32 matmul
    raise Unsupported(ctype)


def output_count(group, test):
    """How many values a case has (SPEC 4), from its parameters: a frequency per rotated pair and the
    attention factor; cos and sin per pair; head_dim rotated elements; one logit; a slope per head;
    one bias."""
    p, ctype = group["params"], group["type"]
    if ctype.startswith("rope"):
        span = p["head_dim"] if p.get("partial") == "proportional" else p["rotary_dim"]
        return {"rope_frequencies": span // 2 + 1, "rope_table": span, "rope_rotate": p["head_dim"],
                "rope_dot": 1}[ctype]
    return {"alibi_slopes": p.get("n_heads"), "alibi_bias": 1}[ctype]


def case_inputs(test):
    """The real inputs of a case, which must be exact in the results file's format (SPEC 7)."""
    values = []
    for key in ("x", "q", "k"):
        if key in test:
            values += list(reals(test[key]))
    return values


def write_results(path, implementation, fmt, working_format, results):
    doc = {"implementation": implementation, "format": fmt, "results": results}
    if working_format:
        doc["workingFormat"] = working_format
    with open(path, "w") as f:
        json.dump(doc, f)


def results_for(vectors_dir, files, make_style, fmt="f32"):
    """Every valid case of `files` whose inputs are exact in `fmt`, answered by the style that
    `make_style(group_params, file)` builds (None, or Unsupported raised: left out)."""
    out = []
    for file in files:
        doc = load(vectors_dir, file)
        for group in doc["testGroups"]:
            ctype = group["type"]
            try:
                style = make_style(group["params"], file)
            except Unsupported:
                continue
            if style is None:
                continue
            for test in group["tests"]:
                if test["result"] != "valid":
                    continue
                if fmt == "f32" and not exact_in_f32(case_inputs(test)):
                    continue
                try:
                    if ctype.startswith("rope"):
                        values = rope_outputs(style, ctype, test)
                    else:
                        values = style.outputs(ctype, test)
                except Unsupported:
                    continue
                if len(values) != output_count(group, test):
                    continue  # a table of another shape (a mutant's rotary_dim): not comparable
                if fmt == "f32":
                    text = [float(np.float32(v)).hex() for v in values]
                else:
                    text = [float(v).hex() for v in values]
                out.append({"file": file, "tcId": test["tcId"], "values": text})
    return out
