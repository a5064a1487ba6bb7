#!/usr/bin/env bash
# Installs the Debian packages posenc builds with. Idempotent: installs only what is missing,
# so `make test` on a prepared machine does not touch apt at all.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libboost1.81-dev   # Boost.Multiprecision; 1.74 (Debian's default) predates the trig-accuracy fixes
  libmpfr-dev libgmp-dev
  librapidcheck-dev libgtest-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libsleef-dev
  libsimde-dev        # AVX-512 emulated on AVX2, to test that path on machines without it
  libssl-dev          # SHA-256 of the vector files (vectors/MANIFEST)
  python3-jsonschema  # validates the vector files against vectors/schema in the tests
  python3-numpy       # the seed 003 numpy RoPE example (examples/python) that writes a results file
  clang libclang-rt-14-dev  # libFuzzer for the fuzz targets (make fuzz)
)

# The HTML report's browser test (POSENC_BROWSER_TEST=OFF skips it, and these).
if [ "${POSENC_BROWSER_TEST:-ON}" != "OFF" ]; then
  packages+=(chromium python3-pil)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "posenc: missing Debian packages: ${missing[*]}" >&2
  echo "posenc: run as root, or install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi

echo "posenc: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
