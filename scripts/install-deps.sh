#!/usr/bin/env bash
# Installs the Debian packages one make target needs: scripts/install-deps.sh TARGET, TARGET one
# of conform (the CLI: what every other target needs too), test, sanitize, fuzz, bench, peers; for
# the targets that run the tests, also the tests' Python venv with its pinned PyPI packages
# (scripts/python-venv.sh: PyPI torch for the Python package's tests, the peers' packages for test
# and peers). Installs only what is missing: one dpkg-query call answers for all, so a prepared
# machine does not touch apt at all.
set -euo pipefail
target=${1:-conform}

# The CLI and the libraries under it.
packages=(
  build-essential cmake pkg-config
  libboost1.81-dev   # Boost.Multiprecision; 1.74 (Debian's default) predates the trig-accuracy fixes
  libmpfr-dev libgmp-dev
  librapidcheck-dev  # the judge's property checks, which `posenc conform` runs
  nlohmann-json3-dev libcli11-dev libsleef-dev
  libsimdjson-dev    # reads the vector, results and report files (nlohmann/json writes them)
  libsimde-dev       # fast/ configures its AVX-512-emulated test library with it
  libssl-dev         # SHA-256 of the vector files (vectors/MANIFEST)
)
tests=(
  libgtest-dev
  ccache              # the builds of every fresh clone reuse the last ones' objects (CMakeLists.txt)
  python3-venv        # .venv (scripts/python-venv.sh): Debian's Python 3.11 and the tests' PyPI pins
  python3-numpy       # with /usr/bin/python3: the seed 003 numpy RoPE example (examples/python), the bug zoo (bugs/)
)
# The peers (peers/README.md; `make peers`, and the peers label of `make test` unless
# POSENC_PEER_TESTS=OFF): their Python packages, PyPI torch among them, are .venv's
# (scripts/requirements-peers*.txt); the Python package's tests (POSENC_PYTHON_TESTS) need nothing
# from Debian beyond python3-venv: their torch is .venv's too (scripts/requirements-python.txt).
peers=(python3-venv)
# The HTML report's browser test (POSENC_BROWSER_TEST=OFF skips it, and these, ~300 MB).
browser=(chromium python3-pil)
# The sanitized build and the libFuzzer targets: clang 16 (clang 14, Debian's default, has no
# _Float16 on x86, which the tests and test plugins use).
clang=(clang-16 libclang-rt-16-dev)

case $target in
  conform) ;;
  test)
    packages+=("${tests[@]}")
    if [ "${POSENC_BROWSER_TEST:-ON}" != OFF ]; then packages+=("${browser[@]}"); fi
    if [ "${POSENC_PEER_TESTS:-ON}" != OFF ]; then packages+=("${peers[@]}"); fi ;;
  peers) packages+=("${peers[@]}") ;;
  sanitize) packages+=("${tests[@]}" "${clang[@]}") ;;
  fuzz) packages+=("${tests[@]}" "${clang[@]}") ;;
  bench) packages+=(libbenchmark-dev) ;;
  *) echo "install-deps.sh: unknown target '$target' (conform, test, sanitize, fuzz, bench, peers)" >&2; exit 2 ;;
esac

# (dpkg-query fails when any package is unknown to dpkg; the others are still listed.)
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null | awk '/install ok installed/ {print $1}' || true)
missing=()
for p in "${packages[@]}"; do
  grep -qxF "$p" <<<"$installed" || missing+=("$p")
done
# The venv's extras: the peers' packages (with torch) when the peers run, else torch when the
# Python package's tests run, else the base pins alone.
with_python() { if [ "${POSENC_PYTHON_TESTS:-ON}" != OFF ]; then echo python; fi; }
venv() {
  case $target in
    test) if [ "${POSENC_PEER_TESTS:-ON}" != OFF ]; then scripts/python-venv.sh peers; else scripts/python-venv.sh $(with_python); fi ;;
    peers) scripts/python-venv.sh peers ;;
    sanitize) scripts/python-venv.sh $(with_python) ;;
    fuzz) scripts/python-venv.sh ;;
  esac
}
cd "$(dirname "$0")/.."
if [ ${#missing[@]} -eq 0 ]; then venv; exit 0; fi

if [ "$(id -u)" -ne 0 ]; then
  echo "posenc: missing Debian packages: ${missing[*]}" >&2
  echo "posenc: run as root, or install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi

echo "posenc: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
venv
