#!/usr/bin/env bash
# tests/peers/ort_run_test.sh POSENC RUN_SH OUTDIR PROFILE: the ONNX Runtime peer as `make peers`
# runs it (peers/onnxruntime/run.sh, four rows) on rope/partial, with each row's verdict pinned, so
# that a change to a bound or a vector that flips one is seen at once. A skip (onnxruntime not
# importable) prints SKIPPED and exits 0.
set -euo pipefail
posenc=$1 run=$2 out=$3 profile=$4
rm -rf "$out/$profile"
bash "$run" "$posenc" "$out/$profile" "$profile" rope/partial
if [[ -f $out/$profile/onnxruntime.skipped ]]; then
  echo "SKIPPED: $(cat "$out/$profile/onnxruntime.skipped")"
  exit 0
fi
got=$(python3 - "$out/$profile" "$profile" <<'PY'
import json, sys
for op in ("contrib", "standard"):
    for row in ("framework", "accurate"):
        d = json.load(open(f"{sys.argv[1]}/onnxruntime-{op}-{row}.{sys.argv[2]}.json"))
        for g in d["groups"]:
            for f, j in g["accuracy"]["judged"].items():
                m = g["worstMarginByFormat"].get(f, {}).get("value", 0)
                print(op, row, g["file"], f, "pass" if j["failed"] == 0 else "fail", f"(margin {m:.3g})")
PY
)
echo "$got"
# standard: both caches pass on rope/partial (head_dim <= 64; the framework's float32 angles stay
# inside standard's allowance), in f32 and f16, for both ops.
want=""
for op in contrib standard; do
  for row in framework accurate; do
    want+="$op $row rope/partial.json f32 pass"$'\n'"$op $row rope/partial.json f16 pass"$'\n'
  done
done
if [[ $(echo "$got" | sed 's/ (margin.*//') != "${want%$'\n'}" ]]; then
  echo "FAIL: the ONNX Runtime peer's verdicts under $profile changed; pinned:" >&2
  echo "$want" >&2
  exit 1
fi
echo "ONNX Runtime peer under $profile: verdicts as pinned"
