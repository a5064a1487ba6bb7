#!/usr/bin/env bash
# One plugin check as a CTest test (tests/plugins/CMakeLists.txt):
#   conform_expect.sh POSENC DESCRIPTION STATUS TEXT CONFORM-ARGS...
# `posenc conform CONFORM-ARGS` must exit with STATUS and print TEXT (tests/lib/expect.sh).
set -u
source "$(dirname "$0")/../lib/expect.sh"
posenc=$1 description=$2 status=$3 text=$4
shift 4
expect "$description" "$status" "$text" "$posenc" conform "$@"
expect_summary
