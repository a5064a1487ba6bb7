#!/usr/bin/env bash
# tests/peers/with_python.sh PYTHON SCRIPT ARGS...: runs SCRIPT with PYTHON, or reports the test
# skipped (status 77, CTest's SKIP_RETURN_CODE) when that interpreter does not exist: a peer that
# cannot run here is never a pass or a fail.
set -euo pipefail
python=$1
shift
if ! [ -x "$python" ]; then
  echo "SKIPPED: no $python (scripts/python-venv.sh peers makes it)"
  exit 77
fi
exec "$python" "$@"
