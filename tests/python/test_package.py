"""The posenc package on its own: finding the CLI, a case's inputs in each format (numpy and
torch), refused outputs, verdicts, the protocol's errors, and the plugin's submit route.
POSENC_CLI and PYTHONPATH come from CTest (tests/python/CMakeLists.txt)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import posenc
from posenc._cli import find_cli

CLI = os.environ["POSENC_CLI"]


@pytest.fixture(scope="module")
def session():
    with posenc.Session(profile="exact", cli=CLI) as s:
        yield s


@pytest.fixture(scope="module")
def rotations(session):
    cases = session.cases("rope/none", valid=True, expected=True)
    return [c for c in cases if c.type == "rope_rotate" and set(c.formats) == set(posenc.FORMATS)]


def test_cli_not_found_names_both_ways(monkeypatch, tmp_path):
    monkeypatch.delenv("POSENC_CLI", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(posenc.PosencError, match="POSENC_CLI.*PATH"):
        find_cli()
    monkeypatch.setenv("POSENC_CLI", str(tmp_path / "nothing"))
    with pytest.raises(posenc.PosencError, match="POSENC_CLI = .*nothing"):
        find_cli()


def test_cli_bundled_in_the_wheel_comes_before_path(monkeypatch, tmp_path):
    """A pip-installed package (python/pyproject.toml) talks to the CLI its wheel carries, whatever
    posenc is on PATH; POSENC_CLI and the cli argument still come first."""
    def executable(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
        return str(path)
    bundled = executable(tmp_path / "site" / "posenc" / "_cli" / "bin" / "posenc")
    on_path = executable(tmp_path / "bin" / "posenc")
    monkeypatch.setattr(posenc._cli, "BUNDLED", bundled)
    monkeypatch.delenv("POSENC_CLI", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert find_cli() == bundled
    monkeypatch.setenv("POSENC_CLI", on_path)
    assert find_cli() == on_path
    assert find_cli(cli=bundled) == bundled
    monkeypatch.delenv("POSENC_CLI")
    monkeypatch.setattr(posenc._cli, "BUNDLED", str(tmp_path / "absent" / "posenc"))
    assert find_cli() == on_path


def test_inputs_in_each_format(rotations):
    c = rotations[0]
    x = {f: c.inputs(f)["x"] for f in posenc.FORMATS}
    assert x["f64"].dtype == np.float64 and x["f32"].dtype == np.float32 and x["f16"].dtype == np.float16
    assert x["bf16"].dtype == np.float32 and not (x["bf16"].view(np.uint32) & 0xFFFF).any()  # bf16 values
    for f in posenc.FORMATS:
        assert np.array_equal(x[f].astype(np.float64), x["f64"])  # inputs are exact in every judged format
    t = c.x("bf16", torch=True, device="cpu")
    assert t.dtype == torch.bfloat16 and t.device.type == "cpu"
    assert c.params["head_dim"] == len(x["f64"]) and isinstance(c.params["base"], float)


def first_of(session, file, type, where=lambda c: True):
    return next(c for c in session.cases(file, valid=None) if c.type == type and where(c))


def test_positions_are_python_ints_by_field(session):
    """positions(): a single position as int; RoPE's per axis (one, or M-RoPE's three) and
    sinusoidal_dot's pair as tuples of ints; rope_dot's sides and alibi_bias's fields by name;
    nothing numpy."""
    def exactly_int(v):
        return type(v) is int

    rotate = first_of(session, "rope/none", "rope_rotate")
    p = rotate.positions()
    assert list(p) == ["position"] and type(p["position"]) is tuple and len(p["position"]) == 1
    assert exactly_int(p["position"][0]) and p["position"][0] == int(rotate.raw["position"][0])
    mrope = first_of(session, "rope/mrope", "rope_rotate", lambda c: len(c.raw["position"]) == 3).positions()["position"]
    assert type(mrope) is tuple and len(mrope) == 3 and all(map(exactly_int, mrope))
    dot = first_of(session, "rope/none", "rope_dot").positions()
    assert set(dot) == {"qPosition", "kPosition"}
    assert all(type(v) is tuple and len(v) == 1 and exactly_int(v[0]) for v in dot.values())
    pair = first_of(session, "sinusoidal/dot", "sinusoidal_dot").positions()["positions"]
    assert type(pair) is tuple and len(pair) == 2 and all(map(exactly_int, pair))
    bias = first_of(session, "alibi/bias", "alibi_bias").positions()
    assert set(bias) == {"head", "queryPosition", "keyPosition"} and all(exactly_int(v) for v in bias.values())
    assert exactly_int(first_of(session, "sinusoidal/embedding", "sinusoidal_embed").positions()["position"])
    assert exactly_int(first_of(session, "learned/lookup", "learned_lookup").positions()["position"])
    assert first_of(session, "rope/none", "rope_frequencies").positions() == {}


def test_params_are_ints_and_floats_with_the_exact_hex_beside(session):
    c = session.cases("rope/llama3")[0]
    scaling = c.params["scaling"]
    assert type(scaling["original_max_positions"]) is int and scaling["original_max_positions"] == 8192
    scaling_hex = c.params_hex["scaling"]
    assert type(scaling["factor"]) is float and scaling["factor"] == 8.0 and scaling_hex["factor"] == "0x1p+3"
    assert type(c.params["head_dim"]) is int and scaling_hex["original_max_positions"] == 8192
    assert c.params_hex["base"] == "0x1.e848p+18" and float.fromhex(c.params_hex["base"]) == c.params["base"] == 500000.0

    # Everywhere: no number left as a string in params; params_hex is params with reals as hex text.
    def leaves(v, hex_v, where):
        if isinstance(v, dict):
            assert set(v) == set(hex_v), where
            for k in v:
                yield from leaves(v[k], hex_v[k], f"{where}.{k}")
        elif isinstance(v, list):
            assert len(v) == len(hex_v), where
            for i, (a, b) in enumerate(zip(v, hex_v)):
                yield from leaves(a, b, f"{where}[{i}]")
        else:
            yield v, hex_v, where

    seen = set()
    for c in session.cases(valid=None):
        if (c.file, c.group) in seen:
            continue
        seen.add((c.file, c.group))
        for v, hex_v, where in leaves(c.params, c.params_hex, f"{c.file} group {c.group} params"):
            if isinstance(v, str):
                assert not re.fullmatch(r"-?[0-9]+|-?0x.*|-?inf|nan", v), f"{where} = {v!r}: a number left as a string"
                assert hex_v == v, where
            elif type(v) is float:
                assert float.fromhex(hex_v) == v or (v != v and hex_v == "nan"), where
            else:
                assert type(v) in (int, bool) and hex_v == v, f"{where} = {v!r}"


def test_not_judged_format_has_no_inputs(session):
    f64_only = [c for c in session.cases("rope/none") if c.formats == ("f64",)]
    assert f64_only, "rope/none has F64Only cases"
    with pytest.raises(posenc.PosencError, match=f"tcId {f64_only[0].tc_id}: not judged in f32"):
        f64_only[0].inputs("f32")


def test_expected_values_pass_exact_in_every_format_numpy_and_torch(session, rotations):
    for c in rotations[:20]:
        for f in posenc.FORMATS:
            assert session.judge(c, f, c.expected(f)).passed
            v = session.judge(c, f, c.expected(f, torch=True))
            assert v.passed and v.margin == 0, v.describe()


def test_a_wrong_element_is_reported_with_its_fields(session, rotations):
    c = rotations[3]
    out = c.expected("f32").copy()
    out[1] = np.nextafter(out[1], np.float32(np.inf))
    v = session.judge(c, "f32", torch.tensor(out).to(torch.float32))
    assert v.verdict == "fail" and v.failure.index == 1 and v.margin == float("inf")  # exact asks for the bits
    assert float.fromhex(v.failure.got) == float(out[1]) and v.failure.got != v.failure.expected
    with pytest.raises(AssertionError, match=f"tcId {c.tc_id} in f32.*\n.*Mismatched element: 1 of"):
        v.check()


def test_values_not_of_the_format_are_refused_naming_case_and_element(session, rotations):
    c = next(c for c in rotations if c.outputs >= 4)
    out = c.expected("f64").copy()
    out[2] = 0.1  # not a bf16 value
    with pytest.raises(posenc.PosencError, match=f"tcId {c.tc_id} in bf16: output element 2 = 0.1 .* not a bf16 value"):
        session.judge(c, "bf16", out)
    with pytest.raises(posenc.PosencError, match="outputs given, the case has"):
        session.judge(c, "f64", out[:-1])


def test_protocol_errors_name_the_field_and_the_session_goes_on(session, rotations):
    with pytest.raises(posenc.PosencError, match="has no case with tcId 999999"):
        session._request({"op": "judge", "file": "rope/none.json", "format": "f32", "results": [{"tcId": 999999, "values": []}]})
    with pytest.raises(posenc.PosencError, match="'op': 'bogus'"):
        session._request({"op": "bogus"})
    with pytest.raises(posenc.PosencError, match="file = 'rope/nothing.json'"):
        session._request({"op": "judge", "file": "rope/nothing.json", "format": "f32", "results": []})
    assert session.judge(rotations[0], "f64", rotations[0].expected("f64")).passed  # still answering


def test_serve_without_finish_ends_with_status_2():
    run = subprocess.run([CLI, "serve"], input='{"op":"session"}\n', capture_output=True, text=True)
    assert run.returncode == 2 and "input ended before a finish request" in run.stderr


def test_plugin_submit_route_and_a_test_that_gives_nothing(tmp_path):
    (tmp_path / "test_submit.py").write_text(
        "import posenc\n"
        "@posenc.cases('alibi/slopes', formats=['f64'], profile='exact')\n"
        "def test_submit(case):\n"
        "    case.submit([0.0] * case.case.outputs)\n"
        "@posenc.cases('alibi/slopes', formats=['f64'], profile='exact')\n"
        "def test_nothing(case):\n"
        "    pass\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "posenc.pytest_plugin",
                          str(tmp_path / "test_submit.py")], capture_output=True, text=True)
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "test_submit[alibi/slopes-1-f64]" in out and "Mismatched element: 0 of" in out
    assert "neither returned its outputs nor called case.submit()" in out
    assert "posenc: profile exact" in out and "alibi/slopes.json" in out


HF_CONFIGS = os.path.join(os.path.dirname(__file__), "..", "data", "hf_configs")


def test_a_rope_case_carries_its_parameters_as_a_hugging_face_config(session):
    c = session.cases("rope/llama3")[0]
    hf = c.hf_rope_config()
    assert hf["rope_parameters"]["rope_type"] == "llama3"
    assert hf["rope_parameters"]["rope_theta"] == c.params["base"] and hf["head_dim"] == c.params["head_dim"]
    # NTK scaling has no rope_type in transformers: the reason, not a guess.
    with pytest.raises(posenc.PosencError, match="no Hugging Face-style rope config: .*rope.scaling.kind"):
        session.cases("rope/ntk")[0].hf_rope_config()
    with pytest.raises(posenc.PosencError, match="not a RoPE case"):
        session.cases("alibi/slopes")[0].hf_rope_config()


def test_a_session_on_a_model_config_judges_that_models_vectors():
    config = os.path.join(HF_CONFIGS, "llama-3.1-8b.json")
    with posenc.Session(profile="exact", cli=CLI, hf_config=config) as s:
        cases = s.cases(expected=True)
        # Named after the model (the config's _name_or_path), not after the file.
        assert {c.file for c in cases} == {"rope/Llama-3.1-8B.json"}
        hf = cases[0].hf_rope_config()["rope_parameters"]
        assert (hf["rope_type"], hf["rope_theta"], hf["factor"]) == ("llama3", 500000, 8)
        for c in cases[:10]:
            for f in c.formats:
                assert s.judge(c, f, c.expected(f)).passed


def test_a_model_config_s_vectors_take_the_name_given(tmp_path):
    config = tmp_path / "config.json"
    with open(os.path.join(HF_CONFIGS, "llama-3.1-8b.json")) as f:
        config.write_text(f.read())
    with posenc.Session(profile="exact", cli=CLI, hf_config=str(config), name="llama-8b") as s:
        assert {c.file for c in s.cases()} == {"rope/llama-8b.json"}
    with posenc.Session(profile="exact", cli=CLI, hf_config=str(config)) as s:
        assert {c.file for c in s.cases()} == {"rope/Llama-3.1-8B.json"}
    with pytest.raises(posenc.PosencError, match="invalid --name = 'my/llama'"):
        posenc.Session(profile="exact", cli=CLI, hf_config=str(config), name="my/llama")
    assert os.listdir(posenc.generate_hf_vectors(config, tmp_path / "out", cli=CLI, name="llama-8b") + "/rope") == \
        ["llama-8b.json"]


# --- attention (SPEC.md section 2.7) -------------------------------------------------------------

@pytest.fixture(scope="module")
def decode_cases(session):
    return [c for c in session.cases("attention/decode", expected=True) if "f32" in c.formats]


def split_o_l(case, fmt):
    """The case's expected O and L in fmt, shaped as the judge takes them."""
    shapes, values = case.attention_shapes(), case.expected(fmt)
    n = int(np.prod(shapes["O"]))
    return values[:n].reshape(shapes["O"]), values[n:].reshape(shapes["L"])


def numpy_expressible(case):
    p = case.params
    rope = p.get("rope")
    return (rope is not None and rope["layout"] == "half" and rope["rotary_dim"] == rope["head_dim"]
            and rope["scaling"]["kind"] == "none" and "alibi" not in p and p["mask"] == "causal"
            and not any(k.startswith("scale") for k in p) and not p.get("rope_table_given"))


def numpy_attention(case):
    """Softmax attention in binary64 with Hugging Face's rotate_half RoPE, inv_freq and angles
    in binary64: what the decode file's groups (RoPE, half layout, no scaling) ask."""
    p, pos = case.params, case.positions()
    q, k, v = (x.astype(np.float64) for x in (case.q("f64"), case.k("f64"), case.v("f64")))
    d = p["head_dim"]
    inv_freq = 1.0 / p["rope"]["base"] ** (np.arange(0, d, 2, dtype=np.float64) / d)

    def rope(x, positions):
        angles = np.outer(np.array([t[0] for t in positions], dtype=np.float64), inv_freq)
        cos, sin = (np.concatenate([f(angles)] * 2, axis=-1)[:, None, :] for f in (np.cos, np.sin))
        rotated = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], axis=-1)
        return x * cos + rotated * sin

    q, k = rope(q, pos["queryPositions"]), rope(k, pos["keyPositions"])
    group = p["query_heads"] // p["kv_heads"]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(d)
    nq, nk = q.shape[0], k.shape[0]
    s[:, np.arange(nk)[None, :] > np.arange(nq)[:, None] + (nk - nq)] = -np.inf  # causal, bottom-right
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    o = np.einsum("hqk,khd->qhd", e / e.sum(axis=-1, keepdims=True), v)
    return o, (m[..., 0] + np.log(e.sum(axis=-1))).T


def test_attention_inputs_are_shaped_and_positions_are_per_token(decode_cases):
    c = decode_cases[3]
    shapes = c.attention_shapes()
    assert c.q("bf16").shape == shapes["q"] and c.k("f32").shape == shapes["k"] and c.v("f16").shape == shapes["v"]
    assert c.q("bf16", torch=True).dtype == torch.bfloat16 and c.q("bf16", torch=True).shape == shapes["q"]
    keys = c.positions()["keyPositions"]
    assert len(keys) == shapes["k"][0] and all(isinstance(t, tuple) and isinstance(t[0], int) for t in keys)


def test_attention_expected_o_and_l_pass_and_o_alone_is_judged_on_o(decode_cases):
    with posenc.Session(profile="strict", cli=CLI) as s:
        c = decode_cases[3]
        o, lse = split_o_l(c, "f32")
        assert s.judge(c, "f32", torch.from_numpy(o), lse=torch.from_numpy(lse)).verdict == "pass"
        alone = s.judge(c, "f32", o)
        assert alone.verdict == "pass" and alone.worst.index < o.size
        assert "1 on O alone (L not given)" in s.finish(filter="attention/decode", formats=["f32"]).text


def test_a_binary64_attention_passes_and_a_wrong_one_fails_named(decode_cases):
    with posenc.Session(profile="standard", cli=CLI) as s:
        cases = [c for c in decode_cases if numpy_expressible(c)]
        verdicts = [s.judge(c, "f64", *numpy_attention(c)[:1], lse=numpy_attention(c)[1]) for c in cases]
        assert all(v.verdict in ("pass", "not judged") for v in verdicts), [v.message for v in verdicts]
        assert sum(v.verdict == "pass" for v in verdicts) >= len(verdicts) - 2, [v.message for v in verdicts]
        c = decode_cases[4]
        o, lse = numpy_attention(c)
        o[0, 1] = numpy_attention(decode_cases[3])[0][0, 1]  # head 1 answered from another case
        with pytest.raises(AssertionError, match=r"O\[query 0, head 1, column \d+\]"):
            s.judge(c, "f64", o, lse=lse).check()


def test_attention_outputs_in_another_layout_or_size_are_refused(decode_cases):
    c = decode_cases[5]
    o, lse = split_o_l(c, "f32")
    with pytest.raises(posenc.PosencError, match=r"O has shape \(1, 4, 1, 64\), expected \(1, 4, 64\)"):
        session_judge(c, torch.from_numpy(o).transpose(0, 1)[None])  # SDPA's [batch, heads, queries, dim]
    with pytest.raises(posenc.PosencError, match=r"L \(lse\) has shape \(3,\), expected \(1, 4\)"):
        session_judge(c, o, lse=lse.reshape(-1)[:3])
    with posenc.Session(profile="strict", cli=CLI) as s:
        rope = s.cases("rope/none")[0]
        with pytest.raises(posenc.PosencError, match="lse is an attention output"):
            s.judge(rope, rope.formats[0], np.zeros(rope.outputs), lse=np.zeros(1))


def session_judge(case, o, lse=None):
    with posenc.Session(profile="strict", cli=CLI) as s:
        return s.judge(case, "f32", o, lse=lse)


def test_declared_probability_format_reaches_the_session():
    with posenc.Session(profile="standard", cli=CLI, probability_format="bf16", score_format="f32=f32") as s:
        assert s.info["probabilityFormats"]["bf16"] == "bf16" and s.info["scoreFormats"] == {"f32": "f32"}
