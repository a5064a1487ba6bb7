#!/usr/bin/env python3
"""Checks an HTML report of posenc conform/compare in a real browser (headless Chromium).

What a reader needs to see is checked where the browser laid it out:
- every RoPE, sinusoidal and attention vector file with position data in the JSON reports has a plot whose
  rendered series (non-empty bounding boxes) are exactly one per report and format with data,
  with the line at margin 1, one accurate-context marker per series whose accurateContext has an
  upTo, and both axis labels; and each series draws exactly the report's errorByPosition points in
  its format (a check not judged draws none);
- a file without failures never plots a point above its line at 1 (where the browser drew them);
- the properties table counts, per report, as many passed, failed and unsupported rows as the
  JSON report, and the verdict text counts the unsupported ones as unsupported (never as passed
  or "0 failed");
- the screenshot of the whole page shows pixels of every series colour (formats) present in the
  reports;
- every failing property's counterexample and the replay command are on the page;
- the page logs nothing to the console (no messages, no uncaught errors, no browser warnings).

One browser serves every page of a run: Chromium is driven through the DevTools protocol on a
pipe (--remote-debugging-pipe), which loads a page, runs the probe in it and screenshots that same
page, where a command-line run (--dump-dom, --screenshot) costs a launch of seconds for each.

Runs with Debian's /usr/bin/python3 (tests/browser/CMakeLists.txt), whose python3-pil
scripts/install-deps.sh installs with chromium; the DevTools client is the standard library's.

Usage: check_html_report.py CHROMIUM PAGE.html REPORT.json [REPORT.json ...]
       check_html_report.py CHROMIUM --self-test PAGE.html REPORT.json ...
--self-test breaks copies of the page (a series removed, a passing point moved above its line, a
point added, an unsupported property counted as passed, a console error added) and exits 0 only if the check
rejects each: the check can fail.
"""
import base64
import html
import io
import json
import os
import re
import select
import subprocess
import sys
import tempfile

from PIL import Image

FORMAT_COLOURS = {"f64": (0x1F, 0x5F, 0xA8), "f32": (0xD9, 0x73, 0x0D), "bf16": (0x2B, 0x8A, 0x3E), "f16": (0x8E, 0x44, 0xAD)}
X_LABEL = "|position| + 1"
Y_LABEL = "worst margin (error / bound)"

# Runs in the loaded page: what the browser rendered (a JSON string).
PROBE = """(() => {
const plots = [];
for (const svg of document.querySelectorAll('svg.error-plot')) {
  const drawn = g => { const b = g.getBBox(); return b.width > 0 || b.height > 0; };
  plots.push({
    file: svg.dataset.file,
    series: [...svg.querySelectorAll('g.series')].filter(drawn).map(g => g.dataset.label),
    limits: [...svg.querySelectorAll('g.limit')].filter(drawn).map(g => {
      const r = g.querySelector('polyline').getBoundingClientRect(); return r.top + r.height / 2; }),
    accurate: [...svg.querySelectorAll('g.accurate')].filter(drawn).length,
    // Each series' points where the browser put them (page y of each circle's centre).
    points: Object.fromEntries([...svg.querySelectorAll('g.series')].map(g => [g.dataset.label,
      [...g.querySelectorAll('circle')].map(c => { const r = c.getBoundingClientRect(); return r.top + r.height / 2; })])),
    axisLabels: [...svg.querySelectorAll('text.axis-label')].filter(t => t.getComputedTextLength() > 0).map(t => t.textContent),
    ticks: [...svg.querySelectorAll('text.tick')].filter(t => t.getComputedTextLength() > 0).length,
    width: svg.getBoundingClientRect().width, height: svg.getBoundingClientRect().height,
  });
}
const rows = [...document.querySelectorAll('table.properties')].map(t =>
  Object.fromEntries(['passed', 'failed', 'unsupported'].map(k => [k, t.querySelectorAll('tr.property.' + k).length])));
const verdicts = [...document.querySelectorAll('section.verdict')].map(s => s.innerText);
return JSON.stringify({plots, rows, verdicts, height: document.documentElement.scrollHeight, text: document.body.innerText});
})()"""
# Width of the page in the browser, probe and screenshot alike.
WIDTH = 1200
# What a page may say on the console: nothing. Messages, uncaught errors and the browser's own warnings.
CONSOLE_EVENTS = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")


class Browser:
    """One headless Chromium, driven through the DevTools protocol: NUL-terminated JSON messages,
    commands on the browser's fd 3 and replies and events on its fd 4 (--remote-debugging-pipe)."""

    def __init__(self, path):
        self.profile = tempfile.TemporaryDirectory()
        self.log = tempfile.TemporaryFile("w+")
        # The shell moves our pipes to fds 3 and 4, where Chromium looks for them.
        self.process = subprocess.Popen(
            ["sh", "-c", 'exec "$0" "$@" 3<&0 4>&1 </dev/null >&2', path, "--headless", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", "--remote-debugging-pipe", "--user-data-dir=" + self.profile.name, "about:blank"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self.last_id = 0
        self.pending = b""
        self.events = []

    def close(self):
        self.process.stdin.close()  # Chromium exits when its command pipe closes.
        self.process.wait(timeout=60)
        self.profile.cleanup()

    def fail(self, why):
        self.log.seek(0)
        raise SystemExit(f"the browser {why}; its stderr:\n" + self.log.read()[-2000:])

    def receive(self):
        while b"\0" not in self.pending:
            # A browser that hangs fails the check rather than the test's timeout.
            if not select.select([self.process.stdout], [], [], 120)[0]:
                self.fail("did not answer within 120 s")
            chunk = os.read(self.process.stdout.fileno(), 1 << 20)
            if not chunk:
                self.fail("closed the connection")
            self.pending += chunk
        message, self.pending = self.pending.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=None, **params):
        """Sends a command and returns its result; events that arrive meanwhile are kept."""
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.process.stdin.write(json.dumps(message).encode() + b"\0")
        self.process.stdin.flush()
        while (reply := self.receive()).get("id") != self.last_id:
            self.events.append(reply)
        if "error" in reply:
            self.fail(f"refused {method}: {reply['error']}")
        return reply["result"]

    def take_events(self, session, methods):
        taken = [e for e in self.events if e.get("sessionId") == session and e["method"] in methods]
        self.events = [e for e in self.events if e not in taken]
        return taken

    def render(self, page):
        """Loads PAGE in a fresh tab: (what PROBE saw, the console's messages, a PNG of the whole page)."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        s = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", s)
        self.call("Emulation.setDeviceMetricsOverride", s, width=WIDTH, height=800, deviceScaleFactor=1, mobile=False)
        navigation = self.call("Page.navigate", s, url="file://" + os.path.abspath(page))
        if "errorText" in navigation:
            self.fail(f"could not load {page}: {navigation['errorText']}")
        while not self.take_events(s, ("Page.loadEventFired",)):
            self.events.append(self.receive())
        seen = json.loads(self.call("Runtime.evaluate", s, expression=PROBE, returnByValue=True)["result"]["value"])
        # optimizeForSpeed: a faster PNG encoding, still lossless; it halves a long page's capture.
        shot = self.call("Page.captureScreenshot", s, format="png", captureBeyondViewport=True, optimizeForSpeed=True,
                         clip={"x": 0, "y": 0, "width": WIDTH, "height": seen["height"], "scale": 1})
        console = [json.dumps(e["params"])[:300] for e in self.take_events(s, CONSOLE_EVENTS)]
        self.call("Target.closeTarget", targetId=target)
        self.events = [e for e in self.events if e.get("sessionId") != s]
        return seen, console, base64.b64decode(shot["data"])


def colour_counts(png, colours):
    """Pixels of the screenshot within a small distance of each named colour (from the page's few
    thousand distinct colours, not its millions of pixels)."""
    histogram = Image.open(io.BytesIO(png)).convert("RGB").getcolors(1 << 24)
    return {name: sum(n for n, c in histogram if max(abs(a - b) for a, b in zip(c, rgb)) <= 6)
            for name, rgb in colours.items()}


def expected_plots(reports):
    """file -> (expected series labels, accurate-context markers, labels of series that must stay at or below 1,
    {label: its number of points})."""
    plots = {}
    for r in reports:
        suffix = " \u2014 " + r["implementation"] if len(reports) > 1 else ""
        for g in r["groups"]:
            if g["file"].split("/")[0] not in ("rope", "sinusoidal", "attention") or not g["errorByPosition"]:
                continue
            labels, markers, passing, counts = plots.setdefault(g["file"], ([], 0, [], {}))
            formats = [f for f in FORMAT_COLOURS if any(p["format"] == f for p in g["errorByPosition"])]
            labels.extend(f + suffix for f in formats)
            for f in formats:
                counts[f + suffix] = sum(p["format"] == f for p in g["errorByPosition"])
            markers += sum(1 for f in formats if (g["accurateContext"].get(f) or {}).get("upTo") is not None)
            if g["failed"] == 0:
                passing.extend(f + suffix for f in formats)
            plots[g["file"]] = (labels, markers, passing, counts)
    return plots


def property_counts(report):
    counts = {"passed": 0, "failed": 0, "unsupported": 0}
    for p in report["properties"]:
        counts[p["status"]] += 1
    return counts


def check(browser, page, reports):
    problems = []
    seen, console, png = browser.render(page)
    want = expected_plots(reports)
    got = {p["file"]: p for p in seen["plots"]}
    if sorted(got) != sorted(want):
        problems.append(f"plots for {sorted(got)}, expected {sorted(want)}")
    for file, (labels, markers, passing, counts) in want.items():
        p = got.get(file)
        if p is None:
            continue
        if sorted(p["series"]) != sorted(labels):
            problems.append(f"{file}: rendered series {p['series']}, expected {labels}")
        if len(p["limits"]) != 1:
            problems.append(f"{file}: {len(p['limits'])} lines at margin 1 rendered, expected 1")
        for label, n in counts.items():
            if len(p["points"].get(label, [])) != n:
                problems.append(f"{file}: {label} draws {len(p['points'].get(label, []))} points, the report has {n}")
        if p["accurate"] != markers:
            problems.append(f"{file}: {p['accurate']} accurate-context markers rendered, expected {markers}")
        if p["limits"]:
            for label in passing:
                above = [y for y in p["points"].get(label, []) if y < p["limits"][0] - 0.5]
                if above:
                    problems.append(f"{file}: {label} has no failures but {len(above)} points above its line at 1")
        if sorted(p["axisLabels"]) != sorted([X_LABEL, Y_LABEL]):
            problems.append(f"{file}: axis labels {p['axisLabels']}")
        if p["ticks"] < 4 or p["width"] < 300 or p["height"] < 200:
            problems.append(f"{file}: {p['ticks']} tick labels, {p['width']}x{p['height']} px")
    with_properties = [r for r in reports if r["properties"]]
    if [property_counts(r) for r in with_properties] != seen["rows"]:
        problems.append(f"property rows {seen['rows']}, the reports have {[property_counts(r) for r in with_properties]}")
    for r, text in zip(reports, seen["verdicts"]):
        unsupported = property_counts(r)["unsupported"]
        if unsupported and f"{unsupported} unsupported" not in text:
            problems.append(f"{r['implementation']}: the verdict does not count the {unsupported} unsupported properties")
        if r["properties"] and re.search(r"propert[^\n]*\b0 failed", text):
            problems.append(f"{r['implementation']}: the verdict says '0 failed' of properties")
    for r in reports:
        for prop in r["properties"]:
            if prop["status"] == "failed":
                first_line = prop["counterexample"].strip().splitlines()[0]
                if first_line not in seen["text"]:
                    problems.append(f"failing property {prop['name']}: counterexample not on the page")
                if r["replay"] not in seen["text"]:
                    problems.append(f"failing property {prop['name']}: replay command not on the page")

    if console:
        problems.append("console messages: " + " | ".join(console))
    formats = {label.split(" ")[0] for labels, _, _, _ in want.values() for label in labels}
    counts = colour_counts(png, {f: FORMAT_COLOURS[f] for f in formats})
    for f, n in counts.items():
        if n < 20:
            problems.append(f"screenshot: {n} pixels of the {f} series colour")
    print(f"{page}: {len(got)} plots, screenshot pixels per series colour {counts}")
    return problems


def main():
    args = sys.argv[1:]
    browser = Browser(args.pop(0))
    try:
        return run(browser, args)
    finally:
        browser.close()


def run(browser, args):
    self_test = args[0] == "--self-test"
    if self_test:
        args.pop(0)
    page, report_paths = args[0], args[1:]
    reports = [json.load(open(p, encoding="utf-8")) for p in report_paths]
    if not self_test:
        problems = check(browser, page, reports)
        for p in problems:
            print("FAIL", p)
        print("PASS" if not problems else "FAIL")
        return 1 if problems else 0

    text = open(page, encoding="utf-8").read()
    # A passing plot's first point moved above its line at 1 (to the plot's top edge).
    passing = [label for _, _, labels, _ in expected_plots(reports).values() for label in labels]
    lifted = text
    for label in passing:
        m = re.search(r'<g class="series" data-label="' + re.escape(html.escape(label)) + r'"[^>]*>.*?<circle r="2.5" cx="[^"]*" cy="([^"]*)"', text, flags=re.S)
        if m:
            lifted = text[:m.start(1)] + "31.0" + text[m.end(1):]
            break
    broken = {
        "one series removed": re.sub(r'<g class="series"[^>]*>.*?</g>', "", text, count=1, flags=re.S),
        "a passing point above the line": lifted,
        "a point the report does not have (a check not judged drawn)": re.sub(
            r'(<g class="series"[^>]*>.*?<circle [^>]*/>)', r'\1<circle r="2.5" cx="300.0" cy="300.0"/>', text, count=1,
            flags=re.S),
        "an unsupported property counted as passed": text.replace('class="property unsupported"', 'class="property passed"', 1),
        "a console error": text.replace("</body>", "<script>console.error('broken page')</script></body>"),
    }
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, variant) in enumerate(broken.items()):
            assert variant != text, name
            path = os.path.join(tmp, f"broken{i}.html")  # a name of its own: no page served from a cache
            with open(path, "w", encoding="utf-8") as f:
                f.write(variant)
            problems = check(browser, path, reports)
            print(f"self-test ({name}): {'rejected: ' + problems[0] if problems else 'NOT REJECTED'}")
            ok = ok and bool(problems)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
