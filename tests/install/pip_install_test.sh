#!/usr/bin/env bash
# `pip install ./python` into a fresh venv, then the README's torch route (the snippets
# my_torch_rope.py and torch-route.sh, extracted by readme_snippets.py, with the fresh venv's
# python3 first on PATH) with nothing else: no PYTHONPATH, no POSENC_CLI, no posenc on PATH, run
# outside the source tree. The package must find the CLI its
# wheel carries, and that CLI its vectors.
# Usage: pip_install_test.sh SOURCE_DIR TEST_VENV_PYTHON BUILD_DIR
#   TEST_VENV_PYTHON: the tests' .venv (scripts/python-venv.sh python), whose torch, numpy and
#   pinned scikit-build-core the fresh venv sees through a .pth file, as a user's venv has torch;
#   BUILD_DIR: where scikit-build-core keeps the CMake build between runs.
set -euo pipefail
source_dir=$1 test_python=$2 build_dir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source "$source_dir/tests/lib/expect.sh"

/usr/bin/python3 -m venv "$tmp/venv"
py=$tmp/venv/bin/python
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$test_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/posenc-test-venv.pth"
# Without build isolation and index, so that no registry is needed: the build backend is the
# pinned scikit-build-core the .pth file makes importable. Two build jobs (the machine is shared).
expect "pip install ./python (builds the CLI into the wheel)" 0 "Successfully installed posenc" \
  env CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" "$py" -m pip install --disable-pip-version-check \
  --no-input --no-build-isolation --no-index --config-settings=build-dir="$build_dir" "$source_dir/python"

mkdir "$tmp/work"
"$test_python" "$source_dir/tests/install/readme_snippets.py" "$source_dir/README.md" "$tmp/work" >/dev/null
cd "$tmp/work"
clean=(env -u PYTHONPATH -u POSENC_CLI PATH=/usr/bin:/bin)
expect "the installed package finds the CLI inside it" 0 "$site/posenc/_cli/bin/posenc" \
  "${clean[@]}" "$py" -c 'import posenc._cli; print(posenc._cli.find_cli())'
expect "the bundled CLI finds its vectors" 0 "$site/posenc/_cli/share/posenc/vectors" \
  "$site/posenc/_cli/bin/posenc" list
expect --regex "README torch route, pip-installed package: CONFORMANT under standard" 0 "^CONFORMANT" \
  "${clean[@]}" PATH="$tmp/venv/bin:/usr/bin:/bin" bash -e torch-route.sh
expect --regex "README torch route: float32 angles fail strict, strict only up to position 7" 1 \
  "f32 margin .*, strict up to position 7 (fails at position [0-9]*)$" "${clean[@]}" "$py" my_torch_rope.py strict
# The package is the installed one, not the source tree's.
expect "the package imported is the installed one" 0 "$site/posenc/__init__.py" \
  "${clean[@]}" "$py" -c 'import posenc; print(posenc.__file__)'
expect_summary
