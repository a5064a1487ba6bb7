#!/usr/bin/env bash
# Makes .venv, the tests' Python: Debian's /usr/bin/python3 (the interpreter the python3-* packages
# of install-deps.sh belong to, so the venv sees them too) plus the pinned PyPI packages of
# scripts/requirements-test.txt. Does nothing when .venv already has exactly those.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
requirements=scripts/requirements-test.txt
stamp=$venv/requirements.sha256
want=$(sha256sum "$requirements" | cut -d' ' -f1)
[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && exit 0
echo "posenc: making $venv (pip install -r $requirements)"
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements"
echo "$want" >"$stamp"
