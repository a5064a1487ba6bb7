"""The posenc package on its own: finding the CLI, a case's inputs in each format (numpy and
torch), refused outputs, verdicts, the protocol's errors, and the plugin's submit route.
POSENC_CLI and PYTHONPATH come from CTest (tests/python/CMakeLists.txt)."""
import os
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
        assert {c.file for c in cases} == {"rope/llama-3.1-8b.json"}
        hf = cases[0].hf_rope_config()["rope_parameters"]
        assert (hf["rope_type"], hf["rope_theta"], hf["factor"]) == ("llama3", 500000, 8)
        for c in cases[:10]:
            for f in c.formats:
                assert s.judge(c, f, c.expected(f)).passed
