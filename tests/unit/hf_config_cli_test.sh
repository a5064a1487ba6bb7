#!/usr/bin/env bash
# The CLI's --hf-config: eval prints exactly what the equivalent explicit options print (byte for
# byte), conflicting options and missing lengths are refused naming both, unread keys are notes
# on stderr, and generate/conform/verify run on the model's vectors (the temporary folder gone
# afterwards). eval names the layout it used.
set -u
posenc="$1"
configs="$2/tests/data/hf_configs"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/../lib/expect.sh"

# same NAME CONFIG-ARGS -- EXPLICIT-ARGS: both commands' stdout identical, and status 0.
same() {
  local name=$1; shift
  local a=() b=()
  while [ "$1" != -- ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  if "$posenc" "${a[@]}" > "$out/a" 2> "$out/a.err" && "$posenc" "${b[@]}" > "$out/b" 2> "$out/b.err" &&
     cmp -s "$out/a" "$out/b" && [ -s "$out/a" ]; then
    ok "$name"
  else
    fail "$name"; diff "$out/a" "$out/b" | head -5; cat "$out/a.err" "$out/b.err" | head -5
  fi
}

same "llama 3.1 8B frequencies = explicit llama3 options" \
  eval rope-frequencies --hf-config "$configs/llama-3.1-8b.json" --json -- \
  eval rope-frequencies --head-dim 128 --base 500000 --layout half --scaling llama3 --factor 8 --low-freq-factor 1 \
  --high-freq-factor 4 --original-max-positions 8192 --json
same "DeepSeek-V3 frequencies (yarn, mscale, interleaved)" \
  eval rope-frequencies --hf-config "$configs/deepseek-v3.json" --json -- \
  eval rope-frequencies --head-dim 64 --base 10000 --layout interleaved --scaling yarn --factor 40 \
  --original-max-positions 4096 --beta-fast 32 --beta-slow 1 --mscale 1 --mscale-all-dim 1 --json
same "gpt-oss-20b frequencies (yarn, truncate false)" \
  eval rope-frequencies --hf-config "$configs/gpt-oss-20b.json" --json -- \
  eval rope-frequencies --head-dim 64 --base 150000 --layout half --scaling yarn --factor 32 \
  --original-max-positions 4096 --beta-fast 32 --beta-slow 1 --truncate false --json
factors() { /usr/bin/python3 -c 'import json,sys; print(",".join(repr(v) for v in json.load(open(sys.argv[1]))["rope_scaling"][sys.argv[2]]))' "$configs/phi-3.5-mini-instruct.json" "$1"; }
same "Phi-3.5-mini frequencies at seq_len 131072 (longrope, long factors)" \
  eval rope-frequencies --hf-config "$configs/phi-3.5-mini-instruct.json" --seq-len 131072 --json -- \
  eval rope-frequencies --head-dim 96 --layout half --scaling longrope --factor 32 --original-max-positions 4096 \
  --seq-len 131072 --short-factor "$(factors short_factor)" --long-factor "$(factors long_factor)" --json
x=$(seq -s, 1 80 | sed 's/[0-9]\+/0.5/g')
same "Phi-2 rotation (partial 32 of 80)" \
  eval rope --hf-config "$configs/phi-2.json" --position 4097 --x "$x" --json -- \
  eval rope --head-dim 80 --rotary-dim 32 --layout half --position 4097 --x "$x" --json
q=$(seq -s, 1 256 | sed 's/[0-9]\+/0.25/g')
same "GPT-J-6B logit (interleaved, rotary_dim 64 of 256)" \
  eval rope-dot --hf-config "$configs/gpt-j-6b.json" --positions 2049,2047 --q "$q" --k "$q" --json -- \
  eval rope-dot --head-dim 256 --rotary-dim 64 --layout interleaved --positions 2049,2047 --q "$q" --k "$q" --json
same "Qwen2-VL table row (mrope sections 16,24,24)" \
  eval rope --hf-config "$configs/qwen2-vl-7b-instruct.json" --position 5,6,7 -- \
  eval rope --head-dim 128 --base 1000000 --layout half --mrope-section 16,24,24 --position 5,6,7

# Dynamic NTK (no published config here: a Llama-2-shaped one): the original length is
# max_position_embeddings, the forward's length --seq-len.
printf '{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
  "rope_scaling": {"type": "dynamic", "factor": 2.0}}' > "$out/llama2-dynamic.json"
same "dynamic NTK at seq_len 8192 = explicit options" \
  eval rope-frequencies --hf-config "$out/llama2-dynamic.json" --seq-len 8192 -- \
  eval rope-frequencies --head-dim 128 --layout half --scaling dynamic --factor 2 --original-max-positions 4096 --seq-len 8192
expect "dynamic NTK: both forward lengths, every position below its seq_len" 0 "CONFORMANT: 620 checks judged (f64 155, f32 155, bf16 155, f16 155)" \
  env TMPDIR="$out" "$posenc" conform --impl reference --profile exact --hf-config "$out/llama2-dynamic.json" --checks accuracy

# eval names the layout, in text and JSON (interleaved unless --layout).
# NanoChat rotates by -t (the registry's measured direction): its rotation is the explicit
# --inverse true one, and --inverse true with the config is its backward pass, the rotation by +t.
printf '{"model_type": "nanochat", "hidden_size": 512, "num_attention_heads": 8, "rope_theta": 10000.0, "max_position_embeddings": 2048}' >"$out/nanochat.json"
same "nanochat rotates backward: = explicit --inverse true" \
  eval rope --hf-config "$out/nanochat.json" --position 3 --json -- \
  eval rope --head-dim 64 --base 10000 --layout half --inverse true --position 3 --json
same "nanochat with --inverse true: its backward pass, the forward rotation" \
  eval rope --hf-config "$out/nanochat.json" --inverse true --position 3 --json -- \
  eval rope --head-dim 64 --base 10000 --layout half --position 3 --json
expect "eval names the layout (json)" 0 '"layout": "interleaved"' "$posenc" eval rope-frequencies --head-dim 8 --json
expect "eval names the layout (text)" 0 "  layout half" "$posenc" eval rope --hf-config "$configs/gemma-7b.json" --position 1

expect --stderr "an option the config sets is refused, naming both" 2 \
  "invalid --base = '3': must be absent with --hf-config $configs/llama-3.1-8b.json (the config sets it)" \
  "$posenc" eval rope-frequencies --hf-config "$configs/llama-3.1-8b.json" --base 3
expect --stderr "longrope needs the forward's length" 2 \
  "invalid --seq-len = (missing): must be given with --hf-config $configs/phi-3.5-mini-instruct.json for its rope_type longrope" \
  "$posenc" eval rope-frequencies --hf-config "$configs/phi-3.5-mini-instruct.json"
expect --stderr "a length the rope_type does not use is refused" 2 "invalid --seq-len = '5'" \
  "$posenc" eval rope-frequencies --hf-config "$configs/llama-3.1-8b.json" --seq-len 5
printf '{"model_type": "gemma3_text", "head_dim": 256, "num_attention_heads": 8, "hidden_size": 2560,
  "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0, "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
  "max_position_embeddings": 131072}' > "$out/gemma3-like.json"
expect --stderr "unread keys are notes on stderr" 0 \
  "posenc: note: $out/gemma3-like.json: rope_local_base_freq = 10000.0: the sliding-window layers' base" \
  "$posenc" eval rope-frequencies --hf-config "$out/gemma3-like.json"
printf '{"hidden_size": 64, "num_attention_heads": 2, "rope_scaling": {"rope_type": "yarn", "factor": 0}}' > "$out/bad.json"
expect --stderr "an invalid config value names the key" 2 \
  "invalid hf_config.rope_scaling.original_max_position_embeddings = (missing)" \
  "$posenc" eval rope-frequencies --hf-config "$out/bad.json"
expect --stderr "no file" 2 "/nonexistent.json: cannot open" "$posenc" eval rope-frequencies --hf-config /nonexistent.json

# generate: one file and a MANIFEST, judged as own vectors (deterministic: below).
expect "generate --hf-config" 0 "posenc generate: 1 files, 113 test cases in $out/llama" \
  "$posenc" generate --hf-config "$configs/llama-3.1-8b.json" --out "$out/llama"
expect "the file is listed in the MANIFEST" 0 " 113  rope/Llama-3.1-8B.json" cat "$out/llama/MANIFEST"
expect "the generated vectors run with --own-vectors" 0 "CONFORMANT: 452 checks judged" \
  "$posenc" conform --impl reference --vectors "$out/llama" --own-vectors --checks accuracy
expect "positions run past the context: 262145 for 131072" 0 '"262145"' grep -o '"262145"' "$out/llama/rope/Llama-3.1-8B.json"

# The vectors are named after the model: --name, else the config's _name_or_path (its last part,
# characters outside [A-Za-z0-9._-] as '_'), else its model_type, else the file's name. These
# checks, and determinism, run on the Llama config with a head of 8: neither depends on the head's
# size, and it has 4 pairs to certify instead of 64.
mkdir -p "$out/local" "$out/typed" "$out/bare"
/usr/bin/python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); c["hidden_size"] = 8 * c["num_attention_heads"]; c.pop("head_dim", None)
json.dump(c, open(sys.argv[2], "w"))
c["_name_or_path"] = "/home/me/models/My Llama (8B)/"; json.dump(c, open(sys.argv[3], "w"))
del c["_name_or_path"]; json.dump(c, open(sys.argv[4], "w"))
del c["model_type"]; json.dump(c, open(sys.argv[5], "w"))' "$configs/llama-3.1-8b.json" "$out/config.json" \
  "$out/local/config.json" "$out/typed/config.json" "$out/bare/llama-bare.json"
"$posenc" generate --hf-config "$out/config.json" --name llama8b --out "$out/named" > /dev/null
expect "--name names the file" 0 " rope/llama8b.json" cat "$out/named/MANIFEST"
names() { "$posenc" generate --hf-config "$1" --out "$2" > /dev/null && awk '{print $NF}' "$2/MANIFEST"; }
expect "config.json is named after the model's repository, not the file" 0 "rope/Llama-3.1-8B.json" \
  names "$out/config.json" "$out/by-repo"
"$posenc" generate --hf-config "$out/config.json" --out "$out/by-repo-again" > /dev/null
if diff -r "$out/by-repo" "$out/by-repo-again" > /dev/null; then
  ok "generated vectors are deterministic"
else
  fail "generating twice gave different files"
fi
expect "a local _name_or_path: its last folder, sanitized" 0 "rope/My_Llama__8B_.json" names "$out/local/config.json" "$out/by-folder"
expect "no _name_or_path: the model_type" 0 "rope/llama.json" names "$out/typed/config.json" "$out/by-type"
expect "neither: the file's name" 0 "rope/llama-bare.json" names "$out/bare/llama-bare.json" "$out/by-file"
expect --stderr "an unusable --name is refused, naming the option and the value" 2 \
  "invalid --name = '../evil': must be a file name of letters, digits, '.', '_' and '-', not starting with '.'" \
  "$posenc" generate --hf-config "$configs/llama-3.1-8b.json" --name ../evil --out "$out/evil"
expect --stderr "an unusable --name is refused by conform too" 2 "invalid --name = 'a b'" \
  "$posenc" conform --impl reference --hf-config "$configs/llama-3.1-8b.json" --name "a b"
expect --stderr "--name without --hf-config is refused" 2 "invalid --name = 'x': must be absent without --hf-config" \
  "$posenc" conform --impl reference --filter alibi/slopes --name x
printf '{"_name_or_path": 7, "hidden_size": 64, "num_attention_heads": 2, "max_position_embeddings": 64}' > "$out/odd.json"
expect --stderr "a _name_or_path that is not a string is refused, naming the key" 2 "invalid hf_config._name_or_path = 7" \
  "$posenc" generate --hf-config "$out/odd.json" --out "$out/odd"
expect "conform --hf-config --name: the report names the file so" 0 "rope/llama8b.json" \
  env TMPDIR="$out" "$posenc" conform --impl reference --profile exact --hf-config "$out/config.json" \
  --name llama8b --checks accuracy

# conform/verify --hf-config: generated into a temporary folder, removed afterwards.
mkdir "$out/tmp"
expect "conform --impl fast --hf-config" 0 "CONFORMANT" env TMPDIR="$out/tmp" "$posenc" conform --impl fast --hf-config "$configs/phi-3.5-mini-instruct.json"
if [ -z "$(ls -A "$out/tmp")" ]; then ok "the temporary folder is removed"; else fail "left in TMPDIR: $(ls "$out/tmp")"; fi
expect "the report's replay names the config" 0 "CONFORMANT" env TMPDIR="$out/tmp" "$posenc" conform --impl reference \
  --profile exact --hf-config "$configs/gpt-j-6b.json" --checks accuracy --report "$out/gptj-report.json"
if grep -q -- "--hf-config $configs/gpt-j-6b.json" "$out/gptj-report.json" && ! grep -q posenc-hf- "$out/gptj-report.json"; then
  ok "the replay command is --hf-config, not the temporary folder"
else
  fail "replay: $(grep -o '"replay[^,]*' "$out/gptj-report.json")"
fi
expect --stderr "--vectors with --hf-config is refused" 2 "invalid --vectors = '$out/llama': must be absent with --hf-config" \
  "$posenc" conform --hf-config "$configs/llama-3.1-8b.json" --vectors "$out/llama"
# verify: a results file answering the GPT-J vectors' rotations with their own f64 values passes
# strict; one value off fails.
"$posenc" generate --hf-config "$configs/gpt-j-6b.json" --out "$out/gptj" > /dev/null
results() {
  /usr/bin/python3 - "$out/gptj/rope/gpt-j-6b.json" "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
entries = []
for g in doc["testGroups"]:
    if g["type"] != "rope_rotate":
        continue
    for t in g["tests"]:
        entries.append({"file": "rope/gpt-j-6b.json", "tcId": int(t["tcId"]), "values": list(t["expected"]["f64"])})
if sys.argv[2] == "off":
    entries[3]["values"][0] = float.hex(float.fromhex(entries[3]["values"][0]) * 1.001 + 1e-3)
print(json.dumps({"implementation": "the vectors' own answers", "format": "f64", "results": entries}))
PY
}
results right > "$out/right.json"
results off > "$out/off.json"
expect "verify --hf-config judges a results file" 0 "CONFORMANT: 36 checks judged (f64 36)" \
  env TMPDIR="$out/tmp" "$posenc" verify --hf-config "$configs/gpt-j-6b.json" --results "$out/right.json"
expect "verify --hf-config fails a wrong value" 1 "NOT CONFORMANT" \
  env TMPDIR="$out/tmp" "$posenc" verify --hf-config "$configs/gpt-j-6b.json" --results "$out/off.json"
if [ -z "$(ls -A "$out/tmp")" ]; then ok "verify removes its temporary folder"; else fail "left in TMPDIR: $(ls "$out/tmp")"; fi
expect_summary
