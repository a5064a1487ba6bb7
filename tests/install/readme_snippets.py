"""readme_snippets.py README.md OUTDIR: writes each snippet of the README (a code block after an
`<!-- snippet: NAME -->` line) to OUTDIR/NAME, and fails unless the snippets are exactly the
routes the install tests run (tests/install/readme_routes_test.sh, pip_install_test.sh)."""
import re
import sys

WANT = ["my_model_rope.py", "model-route.sh", "myrope.c", "plugin-route.sh", "my_torch_rope.py", "torch-route.sh",
        "my_torch_attention.py", "attention-route.sh", "my_results.py", "python-route.sh", "cpp-route.sh"]

readme, outdir = sys.argv[1:3]
text = open(readme, encoding="utf-8").read()
snippets = re.findall(r"<!-- snippet: (\S+) -->\n```[a-z]*\n(.*?)```", text, re.S)
names = [n for n, _ in snippets]
assert sorted(names) == sorted(WANT), f"README snippets {names}, expected {WANT}"
for name, body in snippets:
    with open(f"{outdir}/{name}", "w", encoding="utf-8") as f:
        f.write(body)
print("extracted", len(snippets), "snippets")
