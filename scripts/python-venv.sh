#!/usr/bin/env bash
# scripts/python-venv.sh [python|peers]: makes .venv, the tests' Python: Debian 12's /usr/bin/python3
# (3.11; no system site packages, so that every package in it is one of these pins) with
#   scripts/requirements-test.txt          always: jsonschema-rs (vector schemas), pytest;
#   scripts/requirements-python.txt        with `python` or `peers`: PyPI torch and numpy for the
#                                          Python package's tests and examples, scikit-build-core;
#   scripts/requirements-peers.txt         with `peers`: the peers' frameworks (peers/README.md);
#   scripts/requirements-peers-nodeps.txt  with `peers`: installed with --no-deps (the file says why);
#   scripts/requirements-peers-transformers-4.49.txt  with `peers`: into .venv/transformers-4.49
#                                          (--target, --no-deps), beside the venv's transformers 5.
# Each file has its own stamp in the venv, so a venv that already has a file's packages is left
# alone, and `peers` adds its files to a venv that `python` made.
# The wheels are downloaded once into a wheelhouse, POSENC_WHEELHOUSE (default
# ~/.cache/pip/posenc-wheelhouse), and installed from it with --no-index: the registry here answers
# without caching headers, so pip's own HTTP cache keeps nothing and every new venv would download
# torch's 2.8 GB again. Wheels are never committed.
# .venv is a link to a venv kept in POSENC_VENVS (default ~/.cache/posenc/venvs), one per set of
# pins (the hash of the requirements files and of the interpreter's version): a fresh clone (CI
# makes one per run) finds its pins installed instead of unpacking 7 GB of wheels again (2 min of a
# CI run on 2 cores). A venv is only ever added to, by this script under a lock, and always holds
# exactly the pins of its hash; the two most recently used others are kept, older ones removed.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${XDG_CACHE_HOME:-$HOME/.cache}
wheels=${POSENC_WHEELHOUSE:-$cache/pip/posenc-wheelhouse}
venvs=${POSENC_VENVS:-$cache/posenc/venvs}
pins=(scripts/requirements-test.txt scripts/requirements-python.txt scripts/requirements-peers.txt
  scripts/requirements-peers-nodeps.txt scripts/requirements-peers-transformers-4.49.txt)
key=$({ /usr/bin/python3 --version; cat "${pins[@]}"; } | sha256sum | cut -c1-16)
venv=$venvs/$key
mkdir -p "$venvs"
exec 9>"$venvs/.lock"
flock 9
if [ "$(readlink .venv 2>/dev/null)" != "$venv" ]; then
  rm -rf .venv
  ln -s "$venv" .venv
fi
pip() { "$venv/bin/python" -m pip --disable-pip-version-check --no-input "$@"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
# install FILE [PIP-OPTIONS]: the pinned wheels of FILE into the wheelhouse (those already there
# are kept), then into .venv from the wheelhouse alone.
install() {
  local requirements=$1 stamp=$venv/${1##*/}.sha256
  shift
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(sha "$requirements")" ]; then return; fi
  echo "posenc: $venv: pip install $* -r $requirements (wheels in $wheels)"
  mkdir -p "$wheels"
  pip download --quiet --no-deps --only-binary :all: --dest "$wheels" -r "$requirements"
  pip install --quiet --no-index --find-links "$wheels" "$@" -r "$requirements"
  sha "$requirements" >"$stamp"
}

if ! [ -f "$venv/requirements-test.txt.sha256" ] ||
  [ "$(cat "$venv/requirements-test.txt.sha256")" != "$(sha scripts/requirements-test.txt)" ]; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
fi
install scripts/requirements-test.txt
case ${1:-} in
  "") ;;
  python) install scripts/requirements-python.txt ;;
  peers)
    install scripts/requirements-python.txt
    install scripts/requirements-peers.txt
    install scripts/requirements-peers-nodeps.txt --no-deps
    if ! [ -f "$venv/requirements-peers-transformers-4.49.txt.sha256" ]; then rm -rf "$venv/transformers-4.49"; fi
    install scripts/requirements-peers-transformers-4.49.txt --no-deps --upgrade --target "$venv/transformers-4.49"
    # Every declared requirement is met but those of the --no-deps packages, which are shown.
    nodeps=$(sed -n 's/^\([A-Za-z0-9_.-]*\)==.*/\1/p' scripts/requirements-peers-nodeps.txt | paste -sd'|')
    if ! unmet=$(pip check); then
      if grep -viE "^($nodeps) " <<<"$unmet"; then
        echo "posenc: $venv: pip check: requirements unmet (above)" >&2
        exit 1
      fi
    fi ;;
  *) echo "python-venv.sh: unknown argument '$1' (none, python or peers)" >&2; exit 2 ;;
esac
touch "$venv/.last-used"
# shellcheck disable=SC2012  # the venvs' names are hex digests
ls -td "$venvs"/*/.last-used 2>/dev/null | tail -n +4 | while read -r used; do rm -rf "${used%/.last-used}"; done
