#!/usr/bin/env bash
# The accurate context (SPEC.md section 9) of a binary32-angle plugin (Hugging Face's inv_freq and
# angle in float, Llama 3's scaling too) under strict and standard, on rope/none and on the vectors
# of a Llama 3.1 8B config: it ends at the first failure or at the last judged position, and says
# which; checks not judged (bound vacuous) below it are counted, never end it. So for this code,
# which fails strict early and passes standard wherever standard judges, the standard context is
# never shorter than the strict one in any file and format (on Llama 3.1 8B's bf16 rows, where two
# logits are not judged under standard only, ending the context at them made it 131072 against
# strict's 262145), and the first failure is never nearer under the looser profile.
# The report is read with Debian's /usr/bin/python3 (the standard library's json is all it needs).
# Usage: accurate_context_test.sh POSENC PLUGIN HF_CONFIGS
set -u
posenc=$1 plugin=$2 configs=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/../lib/expect.sh"

for vectors in none llama; do
  if [ "$vectors" = none ]; then
    args=(--filter rope/none)
  else
    args=(--hf-config "$configs/llama-3.1-8b.json")
  fi
  for profile in strict standard; do
    status=0
    TMPDIR="$out" "$posenc" conform --impl "$plugin" --profile "$profile" --checks accuracy "${args[@]}" \
      --report "$out/$vectors.$profile.json" >"$out/$vectors.$profile.txt" 2>&1 || status=$?
    [ "$status" -le 1 ] || { fail "$vectors under $profile: exit $status"; cat "$out/$vectors.$profile.txt"; }
  done
  expect_result --regex "$vectors: strict's context ends at a failure, in the text's words" 0 \
    "f32 margin [^,]*, strict up to position [0-9]* (fails at position [0-9]*)" 0 "$(cat "$out/$vectors.strict.txt")"
  expect_result --regex "$vectors: standard's ends at the last judged position, counting the vacuous checks below it" 0 \
    "f32 margin [^,]*, standard up to position [0-9]* (last judged position; [0-9]* checks\? not judged: bound vacuous)" \
    0 "$(cat "$out/$vectors.standard.txt")"
  expect_result "$vectors: the overall context per format" 0 "accurate context (every file): f64 standard up to position " \
    0 "$(cat "$out/$vectors.standard.txt")"
  expect "$vectors: standard is never shorter than strict, nor fails sooner, in any file and format" 0 "compared" \
    /usr/bin/python3 - "$out/$vectors.strict.json" "$out/$vectors.standard.json" <<'PY'
import json, sys
strict, standard = (json.load(open(p)) for p in sys.argv[1:3])
problems, compared = [], 0
def compare(where, tight, loose):
    global compared
    for f, t in tight.items():
        l = loose.get(f)
        if l is None:
            problems.append(f"{where} {f}: judged under strict only")
            continue
        compared += 1
        print(f"{where} {f}: strict {t['upTo']} ({t['end']}, fails at {t['failsAt']}), "
              f"standard {l['upTo']} ({l['end']}, {l['boundVacuous']} vacuous below)")
        if (l["upTo"] if l["upTo"] is not None else -1) < (t["upTo"] if t["upTo"] is not None else -1):
            problems.append(f"{where} {f}: standard up to {l['upTo']}, shorter than strict's {t['upTo']}")
        if l["failsAt"] is not None and (t["failsAt"] is None or l["failsAt"] < t["failsAt"]):
            problems.append(f"{where} {f}: standard fails at {l['failsAt']}, strict at {t['failsAt']}")
loose_groups = {g["file"]: g for g in standard["groups"]}
for g in strict["groups"]:
    compare(g["file"], g["accurateContext"], loose_groups[g["file"]]["accurateContext"])
compare("every file", strict["accurateContext"], standard["accurateContext"])
print("\n".join(problems) or f"compared {compared}")
sys.exit(1 if problems or compared == 0 else 0)
PY
done
# Llama 3.1 8B's bf16 rows: judged up to 262145 under both.
expect "llama: bf16 standard up to position 262145 with the logits not judged below it" 0 \
  "bf16 margin 0.193, standard up to position 262145 (last judged position; 2 checks not judged: bound vacuous)" \
  cat "$out/llama.standard.txt"
expect_summary
