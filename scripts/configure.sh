#!/usr/bin/env bash
# scripts/configure.sh BUILD_DIR CMAKE-ARGS...: configures BUILD_DIR quietly, keeping cmake's
# output in BUILD_DIR/configure.log and printing it when configuring fails.
set -euo pipefail
build=$1
shift
mkdir -p "$build"
if ! cmake -S "$(dirname "$0")/.." -B "$build" "$@" >"$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  echo "posenc: configuring $build failed (log: $build/configure.log)" >&2
  exit 1
fi
