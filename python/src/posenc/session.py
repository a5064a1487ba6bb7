"""A session with `posenc serve` (SPEC.md section 10): one kept CLI process, JSON lines."""
import json
import subprocess

from . import formats as F
from ._cli import find_cli
from .case import attention_values, cases_from_message
from .errors import PosencError
from .verdict import verdict_from


class Session:
    """One judge: a vector set and a tolerance, as `posenc verify` takes them.

    vectors: a folder of vectors (default: the CLI's own, the shipped set); own_vectors: trust
    that folder's MANIFEST (vectors of your own, e.g. `posenc generate --out DIR`); hf_config: a
    Hugging Face config.json, whose model's vectors the CLI generates for the session instead
    (`posenc serve --hf-config`, the mapping is the CLI's); name: their file is rope/NAME.json
    (default: the config's _name_or_path, its last part, else its model_type). formats,
    working_format, score_format, probability_format, bound, max_position, checks: as the CLI's
    --formats, --working-format, --score-format, --probability-format (attention: the formats
    your code rounds its scores and its softmax probabilities to, e.g. "bf16" or "f32=bf16"),
    --bound, --max-position, --checks ("accuracy", "validation" or both, the default).
    report/junit/html: files written at finish()."""

    def __init__(self, profile="strict", vectors=None, own_vectors=False, formats=None, working_format=None,
                 bound=None, max_position=None, implementation="python", cli=None, report=None, junit=None,
                 html=None, max_failures=5, checks=None, hf_config=None, name=None, score_format=None,
                 probability_format=None):
        self.profile = profile
        self.cli = find_cli(cli)
        args = [self.cli, "serve", "--implementation", implementation, "--profile", profile,
                "--max-failures", str(max_failures)]
        for flag, value in (("--vectors", vectors), ("--working-format", working_format),
                            ("--score-format", score_format), ("--probability-format", probability_format), ("--bound", bound),
                            ("--max-position", max_position), ("--report", report), ("--junit", junit),
                            ("--html", html), ("--checks", checks), ("--hf-config", hf_config), ("--name", name)):
            if value is not None:
                args += [flag, str(value)]
        if formats is not None:
            args += ["--formats", ",".join(F.check_format(f) for f in formats)]
        if own_vectors:
            args.append("--own-vectors")
        self.args = args
        self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, bufsize=1 << 20)
        self.summary = None
        self.info = self._request({"op": "session"})

    # --- the protocol -------------------------------------------------------------------------
    def _send(self, request):
        if self._proc.poll() is not None:
            raise PosencError(f"posenc serve ended (status {self._proc.returncode}): {self._proc.stderr.read().strip()}")
        try:
            self._proc.stdin.write(json.dumps(request, separators=(",", ":")) + "\n")
            self._proc.stdin.flush()
        except BrokenPipeError:  # it refused its options and ended before the request
            self._proc.wait()
            raise PosencError(f"{' '.join(self.args)}: ended (status {self._proc.returncode}): "
                              f"{self._proc.stderr.read().strip()}") from None

    def _answer(self):
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            raise PosencError(f"{' '.join(self.args)}: ended (status {self._proc.returncode}): "
                              f"{self._proc.stderr.read().strip()}")
        answer = json.loads(line)
        if "error" in answer:
            raise PosencError(f"posenc serve: {answer['error']}")
        return answer

    def _request(self, request):
        self._send(request)
        return self._answer()

    # --- cases ---------------------------------------------------------------------------------
    def cases(self, filter=None, formats=None, exclude=None, valid=True, expected=False, save=None):
        """The cases of the vector files `filter` selects (patterns as `posenc verify --filter`:
        rope/none, rope, 'rope/y*'; default every file), each with the formats it is judged in
        among `formats` (default the session's). valid: True (default), False, or None for both.
        expected: also fetch each case's correct roundings (Case.expected(fmt)). A case judged in
        none of the formats (its inputs are not values of any) is left out; the summary counts it
        as not judged (inputs not representable). save: also write the answer's lines to that file,
        which posenc.load_cases reads where no CLI runs (a machine that only runs the code)."""
        request = {"op": "cases"}
        for key, value in (("filter", filter), ("exclude", exclude), ("formats", formats)):
            if value is not None:
                request[key] = [value] if isinstance(value, str) else list(value)
        if valid is not None:
            request["valid"] = bool(valid)
        if expected:
            request["expected"] = True
        self._send(request)
        messages = []
        while True:
            message = self._answer()
            if message.get("end") == "cases":
                break
            messages.append(message)
        if save is not None:
            with open(save, "w") as f:
                for message in messages:
                    f.write(json.dumps(message, separators=(",", ":")) + "\n")
        return [c for m in messages for c in cases_from_message(m) if c.formats]

    # --- judging -------------------------------------------------------------------------------
    def judge(self, case, fmt, outputs=None, status="ok", elements=False, lse=None):
        """The verdict on one case's outputs in fmt (numpy, torch on any device, a sequence), or
        on a status: "invalid" (the code refused the parameters) or "unsupported". An attention
        case's outputs are O, [queries, query_heads, value_dim], and lse its log-sum-exp L,
        [queries, query_heads], if the code forms one (without it, O alone is judged and the
        summary counts it so)."""
        if lse is not None and case.type != "attention":
            raise PosencError(f"{case.file} tcId {case.tc_id}: lse is an attention output; this is a {case.type} case")
        return self.judge_file(case.file, fmt, [(case, outputs, status, lse)], elements)[0]

    def judge_file(self, file, fmt, answers, elements=False):
        """Verdicts on many cases of one file in one format in one message: answers is a list of
        (case, outputs), (case, outputs, status) or, for attention, (case, O, status, lse).
        elements: every element's got/expected/margin."""
        cases, request = self._judge_request(file, fmt, answers)
        request["elements"] = bool(elements)
        answer = self._request(request)
        return [verdict_from(c, self.profile, v) for c, v in zip(cases, answer["verdicts"])]

    def submit_file(self, file, fmt, answers):
        """As judge_file, but the outputs are only kept for finish(), which judges them all (the
        batch route: no verdict per case, so the judge runs once)."""
        _, request = self._judge_request(file, fmt, answers)
        request["verdicts"] = False
        return self._request(request)["submitted"]

    def _judge_request(self, file, fmt, answers):
        entries, cases = [], []
        for answer in answers:
            case, outputs, *rest = answer
            status = rest[0] if rest else "ok"
            lse = rest[1] if len(rest) > 1 else None
            if case.file != file:
                raise PosencError(f"{case.file} tcId {case.tc_id} is not a case of {file}")
            entry = {"tcId": case.tc_id, "status": status}
            if status == "ok":
                if case.type == "attention" and case.valid:
                    outputs = attention_values(case, fmt, outputs, lse)
                entry["values"] = F.hex_values(fmt, outputs, f"{case.file} tcId {case.tc_id} in {fmt}")
                if case.valid and case.type != "attention" and len(entry["values"]) != case.outputs:
                    raise PosencError(f"{case.file} tcId {case.tc_id} in {fmt}: {len(entry['values'])} outputs "
                                      f"given, the case has {case.outputs}")
            entries.append(entry)
            cases.append(case)
        return cases, {"op": "judge", "file": file, "format": fmt, "results": entries}

    def finish(self, filter=None, formats=None, exclude=None):
        """The run's verdict on everything judged, as `posenc verify` would print it for the same
        outputs (filter/formats: the run's files and formats, default the session's). Ends the
        session; returns a Summary."""
        request = {"op": "finish"}
        for key, value in (("filter", filter), ("exclude", exclude), ("formats", formats)):
            if value is not None:
                request[key] = [value] if isinstance(value, str) else list(value)
        answer = self._request(request)
        self._proc.stdin.close()
        self._proc.wait()
        self.summary = Summary(answer["summary"], answer["conformant"], answer["report"], self._proc.returncode)
        return self.summary

    def close(self):
        if self._proc.poll() is None:
            self._proc.stdin.close()  # serve notices the end of its input and exits
            self._proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Summary:
    """What `posenc verify` prints (text), its verdict and the JSON report (SPEC.md section 9)."""

    def __init__(self, text, conformant, report, status):
        self.text, self.conformant, self.report, self.status = text, conformant, report, status

    @property
    def accurate_context(self):
        """Per format, over every file judged: {"upTo": P, "end": "failure" or
        "lastJudgedPosition", "failsAt": X or None, "boundVacuous": N} (SPEC.md section 9; each
        file's is its group's "accurateContext" in report)."""
        return self.report["accurateContext"]

    def __str__(self):
        return self.text
