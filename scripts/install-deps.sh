#!/usr/bin/env bash
# Installs the Debian packages one make target needs: scripts/install-deps.sh TARGET, TARGET one
# of conform (the CLI: what every other target needs too), test, sanitize, fuzz, bench, peers; for
# the targets that run the tests, also the tests' Python venv with its pinned PyPI packages
# (scripts/python-venv.sh; with the peers' packages for test and peers). Installs only what is missing: one dpkg-query call answers for all, so
# a prepared machine does not touch apt at all.
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
  python3-venv        # .venv (scripts/python-venv.sh): jsonschema-rs for the vector schemas
  python3-numpy       # the seed 003 numpy RoPE example (examples/python), the Python package (python/), the bug zoo (bugs/)
)
# The Python package's tests (POSENC_PYTHON_TESTS=OFF skips them, and these): Debian's torch, as a
# PyPI torch wheel for Linux is a multi-GB CUDA build; the tests run it in .venv, which sees it
# (tests/python/CMakeLists.txt says which interpreter each test uses).
python=(python3-torch)
# The peers (peers/README.md; `make peers`, and the peers label of `make test` unless
# POSENC_PEER_TESTS=OFF): transformers runs on Debian's torch and reads its config with PyYAML and
# requests, Debian's; the rest of its PyPI packages are scripts/requirements-peers.txt's.
peers=(python3-venv python3-numpy python3-torch python3-yaml python3-requests)
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
    if [ "${POSENC_PYTHON_TESTS:-ON}" != OFF ]; then packages+=("${python[@]}"); fi
    if [ "${POSENC_PEER_TESTS:-ON}" != OFF ]; then packages+=("${peers[@]}"); fi ;;
  peers) packages+=("${peers[@]}") ;;
  sanitize)
    packages+=("${tests[@]}" "${clang[@]}")
    if [ "${POSENC_PYTHON_TESTS:-ON}" != OFF ]; then packages+=("${python[@]}"); fi ;;
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
venv() {
  case $target in
    test) if [ "${POSENC_PEER_TESTS:-ON}" != OFF ]; then scripts/python-venv.sh peers; else scripts/python-venv.sh; fi ;;
    peers) scripts/python-venv.sh peers ;;
    sanitize | fuzz) scripts/python-venv.sh ;;
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
