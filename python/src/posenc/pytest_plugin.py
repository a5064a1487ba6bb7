"""pytest plugin: parametrize tests over posenc's vector cases, judged by posenc's own judge.

    @posenc.cases("rope/*", formats=["f32", "bf16"], profile="standard")
    def test_my_rope(case):
        x = case.inputs(torch=True)["x"]      # in the case's format; bf16 as torch.bfloat16
        return my_rope(x, case.positions()["position"][0], case.params)   # or case.submit(...)

An attention test returns O, or (O, L) when its code forms the log-sum-exp, shaped as
Case.attention_shapes() says; case.q(torch=True), case.k(...), case.v(...) are its inputs.

Each case runs once per format it is judged in (ids: file-tcId-format). A failure gives tcId,
element, got, expected, margin and position; the end of the session prints, per profile, the
summary `posenc verify` prints for the same outputs (verdict per file and format, accurate
context). Loaded by the pytest11 entry point when installed, or with `-p posenc.pytest_plugin`.
"""
import pytest

from .formats import FORMATS
from .session import Session

_MARKER = "posenc_cases"


def cases(pattern, formats=None, profile="strict", argname="case", valid=True, where=None, **session_options):
    """The decorator (also posenc.cases). pattern: vector files as `posenc verify --filter`
    takes them (a string or a list); formats: the formats to judge (default all the CLI judges);
    where: a predicate on a posenc.Case, the cases your code can express (the others are not
    run, and the summary counts them as not judged); session_options: Session's (vectors,
    own_vectors, working_format, bound, max_position)."""
    return pytest.mark.posenc_cases(pattern=pattern, formats=formats, profile=profile, argname=argname, valid=valid,
                                    where=where, session_options=session_options)


class CaseRun:
    """One case in one format, as the test receives it."""

    def __init__(self, session, case, fmt, judged):
        self.session, self.case, self.format = session, case, fmt
        self.verdict = None
        self._judged = judged  # the session's (files, formats) judged: the summary's selection

    @property
    def id(self):
        return f"{self.case.id}-{self.format}"

    @property
    def params(self):
        return self.case.params

    @property
    def tc_id(self):
        return self.case.tc_id

    def positions(self):
        return self.case.positions()

    def inputs(self, torch=False, device=None):
        return self.case.inputs(self.format, torch=torch, device=device)

    def x(self, torch=False, device=None):
        return self.case.x(self.format, torch=torch, device=device)

    def q(self, torch=False, device=None):
        return self.case.q(self.format, torch=torch, device=device)

    def k(self, torch=False, device=None):
        return self.case.k(self.format, torch=torch, device=device)

    def v(self, torch=False, device=None):
        return self.case.v(self.format, torch=torch, device=device)

    def submit(self, outputs=None, status="ok", lse=None):
        """Judges the outputs (or a status, "invalid" or "unsupported"); for attention, O and
        optionally its log-sum-exp lse (Session.judge); AssertionError on a fail."""
        __tracebackhide__ = True
        self.verdict = self.session.judge(self.case, self.format, outputs, status=status, lse=lse)
        self._judged[0].add(self.case.file)
        self._judged[1].add(self.format)
        return self.verdict.check()

    def __repr__(self):
        return f"<posenc case {self.id}>"


class _Sessions:
    """One posenc serve per profile and session options, for the whole pytest run."""

    def __init__(self):
        self.sessions = {}
        self.judged = {}  # session key -> (files, formats) that some test submitted to
        self.cases = {}

    def get(self, profile, options):
        key = (profile, tuple(sorted(options.items())))
        if key not in self.sessions:
            self.sessions[key] = Session(profile=profile, implementation="pytest", **options)
        return key, self.sessions[key]

    def runs(self, mark):
        kw = mark.kwargs
        key, session = self.get(kw["profile"], kw["session_options"])
        pattern, formats = kw["pattern"], kw["formats"]
        want = (key, str(pattern), tuple(formats or ()), kw["valid"])
        if want not in self.cases:
            self.cases[want] = session.cases(filter=pattern, formats=formats, valid=kw["valid"])
        where = kw["where"] or (lambda c: True)
        judged = self.judged.setdefault(key, (set(), set()))
        return key, [CaseRun(session, c, f, judged) for c in self.cases[want] if where(c) for f in c.formats]


def pytest_configure(config):
    config.addinivalue_line("markers", f"{_MARKER}(pattern, formats, profile): parametrize over posenc vector cases")
    config._posenc = _Sessions()


def pytest_generate_tests(metafunc):
    mark = metafunc.definition.get_closest_marker(_MARKER)
    if mark is None:
        return
    _, runs = metafunc.config._posenc.runs(mark)
    metafunc.parametrize(mark.kwargs["argname"], runs, ids=[r.id for r in runs])


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    __tracebackhide__ = True  # a failure shows the test and the judge's words, not this hook
    mark = pyfuncitem.get_closest_marker(_MARKER)
    if mark is None:
        return None
    run = pyfuncitem.funcargs[mark.kwargs["argname"]]
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    returned = pyfuncitem.obj(**args)
    if run.verdict is None:
        if returned is None:
            raise AssertionError(f"posenc: {run.id}: the test neither returned its outputs nor called case.submit()")
        if run.case.type == "attention" and isinstance(returned, tuple):
            run.submit(*returned[:1], lse=returned[1] if len(returned) > 1 else None)  # (O, L)
        else:
            run.submit(returned)
    if run.verdict.verdict == "not judged":  # e.g. a vacuous bound: neither a pass nor a fail
        pytest.skip(f"posenc: {run.id} not judged: {run.verdict.message}")
    return True


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    sessions = getattr(config, "_posenc", None)
    if sessions is None:
        return
    for key, session in sessions.sessions.items():
        files, formats = sessions.judged.get(key, (set(), set()))
        if not files:
            continue
        # The run as `posenc verify --filter FILES --formats FORMATS` would judge these outputs.
        summary = session.finish(filter=sorted(files), formats=[f for f in FORMATS if f in formats])
        terminalreporter.write_sep("=", f"posenc: profile {session.profile}")
        terminalreporter.write(summary.text)


def pytest_unconfigure(config):
    sessions = getattr(config, "_posenc", None)
    for session in (sessions.sessions.values() if sessions else ()):
        session.close()
