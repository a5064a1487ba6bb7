#!/usr/bin/env bash
# peers/python_peer.sh NAME IMPORTS SCRIPT POSENC_CLI OUTDIR PROFILE [FILTER]: runs a Python peer
# (peers/README.md's contract) with the project's .venv (or POSENC_PEER_PYTHON): writes
# OUTDIR/NAME.skipped with the reason, and exits 0, when that interpreter is missing or cannot
# import IMPORTS (comma-separated modules); else runs SCRIPT POSENC_CLI OUTDIR PROFILE [FILTER]
# with POSENC_PEER_PATH (a folder of packages that come first, when set), the Python package
# (python/src), peers/ and SCRIPT's folder on PYTHONPATH.
set -euo pipefail
name=$1 imports=$2 script=$3 cli=$4 out=$5 profile=$6 filter=${7:-}
root=$(cd "$(dirname "$0")/.." && pwd)
python=${POSENC_PEER_PYTHON:-$root/.venv/bin/python}
mkdir -p "$out"
rm -f "$out/$name.skipped" "$out/$name"-*."$profile".json
if ! [ -x "$python" ]; then
  echo "no Python at $python (scripts/python-venv.sh peers makes it)" >"$out/$name.skipped"
  exit 0
fi
first=${POSENC_PEER_PATH:+$POSENC_PEER_PATH:}
if ! why=$(cd / && PYTHONPATH=${POSENC_PEER_PATH:-} "$python" -c "import $imports" 2>&1); then  # from /: not the cwd's folders
  echo "$python cannot import $imports (scripts/python-venv.sh peers): ${why##*$'\n'}" >"$out/$name.skipped"
  exit 0
fi
PYTHONPATH="$first$root/python/src:$root/peers:$(dirname "$script")" "$python" "$script" "$cli" "$out" "$profile" ${filter:+"$filter"}
