#!/usr/bin/env bash
# scripts/python-venv.sh [peers]: makes .venv, the tests' Python: Debian's /usr/bin/python3 (the
# interpreter the python3-* packages of install-deps.sh belong to, so the venv sees them too) plus
# the pinned PyPI packages of scripts/requirements-test.txt; with `peers`, also those of
# scripts/requirements-peers.txt (the peers' frameworks, peers/README.md). Each file has its own
# stamp, so a venv that already has exactly those packages is left alone, and changing the peers'
# pins reinstalls only them.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
pip() { "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$1"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

requirements=scripts/requirements-test.txt
stamp=$venv/requirements.sha256
if ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$(sha "$requirements")" ]; then
  echo "posenc: making $venv (pip install -r $requirements)"
  rm -rf "$venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  pip "$requirements"
  sha "$requirements" >"$stamp"
fi

if [ "${1:-}" = peers ]; then
  requirements=scripts/requirements-peers.txt
  stamp=$venv/requirements-peers.sha256
  if ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$(sha "$requirements")" ]; then
    echo "posenc: adding the peers' packages to $venv (pip install -r $requirements)"
    pip "$requirements"
    sha "$requirements" >"$stamp"
  fi
fi
