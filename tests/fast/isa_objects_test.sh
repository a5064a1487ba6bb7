#!/usr/bin/env bash
# Each path's kernel file (fast/src/scalar, avx2, avx512: kernels.cpp) is compiled with its own
# target flags, so it must share no function with another: every function it defines but its
# entry point (scalar_kernels(), avx2_kernels(), avx512_kernels()) has internal linkage (shared
# data carries no instructions: UBSan's typeinfo of function types, weak objects, is left be). An
# inline function of a shared header with external linkage is emitted in each object as a weak
# definition, and the linker keeps one of them for all: an AVX-512 build of it, once called from
# the AVX2 path on a CPU without AVX-512, is an illegal instruction (why kernels.hpp's TokenRun
# has no member function).
#   isa_objects_test.sh OBJECTS...   object files (CMake's ';'-separated lists or arguments); the
#                                    kernel files among them, three expected, are checked.
set -u
source "$(dirname "$0")/../lib/expect.sh"
checked=0
for object in ${*//;/ }; do
  case "$object" in */kernels.cpp.o) ;; *) continue ;; esac
  isa=$(basename "$(dirname "$object")")
  checked=$((checked + 1))
  entry="T posenc::fast::detail::${isa}_kernels()"
  # The defined external functions (nm's T, W and i), each as its type letter and demangled name.
  symbols=$(nm -C -g --defined-only "$object" | cut -d' ' -f2- | grep '^[TWi] ')
  if [ "$symbols" = "$entry" ]; then
    ok "the $isa kernels define no external function but ${isa}_kernels()"
  else
    fail "the $isa kernels define no external function but ${isa}_kernels(); they define:"
    grep -vxF -- "$entry" <<<"$symbols"
  fi
done
if [ "$checked" -eq 3 ]; then ok "three kernel objects checked"; else fail "three kernel objects checked (found $checked)"; fi
expect_summary
