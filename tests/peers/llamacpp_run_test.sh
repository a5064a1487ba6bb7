#!/usr/bin/env bash
# tests/peers/llamacpp_run_test.sh POSENC RUN_SH OUTDIR PROFILE: the llama.cpp peer as `make peers`
# runs it (peers/llamacpp/run.sh) on a small filter, and its verdict per vector file and format
# pinned below, so that a change to a bound or a vector that flips one is seen at once (and is
# explained in the commit that causes it; peers/llamacpp/README.md says why each fails). A skip
# of the peer (no plugin: the sdist could not be had) prints SKIPPED and exits 0.
set -euo pipefail
posenc=$1 run=$2 out=$3 profile=$4
filter="rope/none rope/partial rope/linear rope/yarn"
rm -rf "$out/$profile"
bash "$run" "$posenc" "$out/$profile" "$profile" "$filter"
if [[ -f $out/$profile/llamacpp.skipped ]]; then
  echo "SKIPPED: $(cat "$out/$profile/llamacpp.skipped")"
  exit 0
fi
report=$out/$profile/llamacpp.$profile.json
# FILE FORMAT pass|fail, and the worst margin (shown, not compared).
got=$(python3 - "$report" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["groups"]:
    for f, j in g["accuracy"]["judged"].items():
        m = g["worstMarginByFormat"].get(f, {}).get("value", 0)
        print(g["file"], f, "pass" if j["failed"] == 0 else "fail", f"(margin {m:.3g})")
PY
)
echo "$got"
case $profile in
  # standard: the float32 theta recurrence (theta *= theta_scale) fails at head_dim 128 from
  # position ~2047 (SPEC.md section 5, "What standard covers"); YaRN adds ggml's float32
  # correction dims and its clamped degenerate range (SPEC.md section 2.4); partial rotary
  # (head_dim <= 64 there) passes.
  standard) want="rope/linear.json f32 fail
rope/linear.json f16 fail
rope/none.json f32 fail
rope/none.json f16 fail
rope/partial.json f32 pass
rope/partial.json f16 pass
rope/yarn.json f32 fail
rope/yarn.json f16 fail" ;;
  # strict: float32 angles fail every file from position ~8 in f32.
  strict) want="rope/linear.json f32 fail
rope/linear.json f16 fail
rope/none.json f32 fail
rope/none.json f16 fail
rope/partial.json f32 fail
rope/partial.json f16 fail
rope/yarn.json f32 fail
rope/yarn.json f16 fail" ;;
  *) echo "no pinned verdicts for profile $profile" >&2; exit 2 ;;
esac
if [[ $(echo "$got" | sed 's/ (margin.*//') != "$want" ]]; then
  echo "FAIL: the llama.cpp peer's verdicts under $profile changed; pinned:" >&2
  echo "$want" >&2
  exit 1
fi
echo "llama.cpp peer under $profile: verdicts as pinned"
