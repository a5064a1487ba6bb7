#!/usr/bin/env bash
# The CLI's documented forms work and print what the README says; bad usage exits with status 2.
set -u
posenc="$1"
source "$(dirname "$0")/../lib/expect.sh"

q=0x1.017ed89db8441p-3,-0x1.0e8cfe9bd45ccp-3,0x1.47e57a468b06dp-1,0x1.adabbec84d4f0p-4,-0x1.1243418e643edp-1,0x1.7245f95ced1e6p-2,0x1.4dd2f26bd103cp+0,0x1.e4e7cbc69bca3p-1
k=-0x1.684ffc1daaf28p-1,-0x1.43f2a959cc8bbp+0,-0x1.3f1dd4920f4fbp-1,0x1.528adc38b0ce3p-5,-0x1.299a9bc1a2383p+1,-0x1.c015d809d257ep-3,-0x1.3ef405142e27ep+0,-0x1.76ebbf28c26f7p-1

# sin(2) = 0.9092974268256816953960198659117448427022549714478902683789... (OEIS A049469)
expect "sinusoidal d=4 position 2 (exact sin 2)" 0 '"exact": "9.0929742682568169539601986591174484270225e-01"' \
  "$posenc" eval sinusoidal --dim 4 --position 2 --json
expect "sinusoidal json f64 of sin 2" 0 '"f64": "0x1.d18f6ead1b446p-1"' "$posenc" eval sinusoidal --dim 4 --position 2 --json
expect "sinusoidal-dot seed 000" 0 '"exact": "2.4910209' "$posenc" eval sinusoidal-dot --dim 512 --positions 10,11 --json
expect "rope seed 003 rotation" 0 '"family": "rope"' "$posenc" eval rope --head-dim 8 --position 5000 --x "$q" --json
expect "rope-dot seed 003" 0 '"exact": "-1.763129' "$posenc" eval rope-dot --head-dim 8 --positions 3,1 --q "$q" --k "$k" --json
expect "rope yarn table" 0 'cos[0]' "$posenc" eval rope --head-dim 64 --position 100000 --scaling yarn --factor 40 \
  --original-max-positions 4096 --mscale 0.707 --mscale-all-dim 0.707
expect "alibi slopes 12 heads" 0 '"name": "slope[11]"' "$posenc" eval alibi --heads 12 --json
expect "alibi biases" 0 '"name": "bias[0]"' "$posenc" eval alibi --heads 12 --query-position 7 --key-position 2 --json
expect "alibi slope 8 heads head 0 is 1/2" 0 '"f64": "0x1p-1"' "$posenc" eval alibi --heads 8 --head 0 --json
# Attention: one query over two keys with scale 1/2, logits 1/2 and 0, v = (1, 0): O = e^(1/2) /
# (e^(1/2) + 1) and L = ln(e^(1/2) + 1), whose 40 digits Python's decimal module computes
# (Decimal('0.5').exp() at precision 45). RoPE with every position 7 rotates q and k alike, which
# keeps q.k: the same O.
attention=(--head-dim 2 --value-dim 1 --scale 0.5 --q 1,0 --k 1,0,0,0 --v 1,0)
expect "attention: O of two keys (exact)" 0 '"exact": "6.2245933120185456463890056574550847875328e-01"' \
  "$posenc" eval attention "${attention[@]}" --query-positions 0 --key-positions 0,1 --json
expect "attention: L (exact), named" 0 $'L[query 0, head 0]\n    exact 9.7407698418010668087299735508117074975560e-01' \
  "$posenc" eval attention "${attention[@]}" --query-positions 0 --key-positions 0,1
expect "attention: RoPE at one position keeps q.k" 0 '"exact": "6.2245933120185456463890056574550847875328e-01"' \
  "$posenc" eval attention "${attention[@]}" --rope --query-positions 7 --key-positions 7,7 --json
# The key at position 1 rotated by 1 radian (pair 0's frequency is 1): its logit cos(1)/2, and O =
# e^(cos(1)/2) / (e^(cos(1)/2) + 1), with cos(1) from its Taylor series in the decimal module.
expect "attention: RoPE rotates the key at its own position" 0 '"exact": "5.6713001241401509214139967857860473073956e-01"' \
  "$posenc" eval attention "${attention[@]}" --rope --query-positions 0 --key-positions 1,0 --json
expect "attention: the binary64 scale a plugin is handed" 0 '"f64": "0x1.6a09e667f3bcdp-1"' \
  "$posenc" eval attention --head-dim 2 --q 1,0 --k 1,0 --v 1,0 --query-positions 0 --key-positions 0 --json
expect "attention: ALiBi and GQA, every output named" 0 "L[query 1, head 3]" \
  "$posenc" eval attention --head-dim 2 --query-heads 4 --kv-heads 2 --alibi causal --mask causal \
  --query-positions 0,1 --key-positions 0,1 --q 1,0,0,1,1,1,0,0,1,0,0,1,1,1,0,0 --k 1,0,0,1,1,1,0,1 --v 1,2,3,4,5,6,7,8
expect --stderr "attention: a RoPE option without --rope" 2 "invalid --base = '100': must be absent without --rope" \
  "$posenc" eval attention "${attention[@]}" --base 100 --query-positions 0 --key-positions 0,1
expect --stderr "attention: positions not a multiple of the axes" 2 \
  "invalid --key-positions = (3 values): must be a non-empty multiple of the position axes (2)" \
  "$posenc" eval attention "${attention[@]}" --rope --mrope-section 0,1 --query-positions 0,0 --key-positions 0,1,2
expect --stderr "attention: a mask value other than 0 or 1" 2 "invalid --mask-values = 2: must be 0 or 1" \
  "$posenc" eval attention "${attention[@]}" --mask explicit --mask-values 1,2 --query-positions 0 --key-positions 0,1
expect --stderr "attention: a row that sees no key" 2 "invalid attention.mask = (row 0 sees no key)" \
  "$posenc" eval attention "${attention[@]}" --mask explicit --mask-values 0,0 --query-positions 0 --key-positions 0,1

expect --stderr "odd head_dim" 2 "invalid rope.head_dim = 7: must be an even integer >= 2" \
  "$posenc" eval rope --head-dim 7 --position 1 --x 1,2,3,4,5,6,7
expect --stderr "scaling option without scaling" 2 "invalid rope.scaling.factor = 4: must be absent for scaling 'none'" \
  "$posenc" eval rope --head-dim 2 --position 1 --factor 4
expect --stderr "bad number" 2 "invalid --position = 'abc'" "$posenc" eval sinusoidal --dim 4 --position abc
expect --stderr "unknown option" 2 "--frobnicate" "$posenc" eval sinusoidal --dim 4 --position 1 --frobnicate
expect --stderr "missing required option" 2 "--dim is required" "$posenc" eval sinusoidal --position 1
expect --stderr "wrong vector length" 2 "invalid rope.x = (3 values): must be exactly 8 values" \
  "$posenc" eval rope --head-dim 8 --position 1 --x 1,2,3
expect --stderr "alibi zero heads" 2 "invalid alibi.n_heads = 0" "$posenc" eval alibi --heads 0
expect --stderr "causal key after query" 2 "invalid alibi.key_position = 9" \
  "$posenc" eval alibi --heads 4 --query-position 3 --key-position 9

# Every check of the three verdict parts, each of ALiBi's 108 properties at 10 cases instead of 100:
# 1.8 s under ASan instead of 23.7, where the properties at 100 are nine tenths of this test. (The
# reference's properties at 100 cases: plugins.reference.all and the conform tests, in make test.)
expect "conform: the reference is exact" 0 "CONFORMANT: 4,688 checks judged (f64 1,172, f32 1,172, bf16 1,172, f16 1,172), 108 properties judged" \
  "$posenc" conform --impl reference --profile exact --filter alibi --property-cases 10
expect --stderr "conform: unknown profile" 2 "invalid --profile = 'fuzzy'" "$posenc" conform --profile fuzzy
expect --stderr "conform: missing vectors" 2 "/nonexistent/MANIFEST: cannot open" "$posenc" conform --vectors /nonexistent
expect --stderr "conform: unknown implementation" 2 "invalid --impl = 'cuda'" "$posenc" conform --impl cuda

# Everyday commands: the help names every subcommand the README uses, each subcommand's help
# works, and `list` counts what MANIFEST lists.
for sub in eval seeds generate list compare conform verify; do
  expect "--help lists $sub" 0 "  $sub " "$posenc" --help
  expect "$sub --help" 0 "Usage:" "$posenc" "$sub" --help
done
for option in --impl --profile --bound --vectors --filter --exclude --max-position --formats --working-format --score-format --probability-format --report --junit --html --seed --property-cases --timeout; do
  expect "conform --help documents $option" 0 "$option" "$posenc" conform --help
done
vectors="$2"
cases=$(awk '!/^#/ {n += $2; f += 1} END {print f " files, " n " cases"}' "$vectors/MANIFEST")
expect "list: $cases as MANIFEST says" 0 "$cases" "$posenc" list --vectors "$vectors"
expect "list: RoPE scalings" 0 "none, linear, ntk, dynamic, yarn, llama3, longrope" "$posenc" list --vectors "$vectors"
expect "list: attention's masks" 0 "attention   attention.mask          none, causal, explicit" "$posenc" list --vectors "$vectors"
expect "list: attention's files" 0 "attention/decode.json" "$posenc" list --vectors "$vectors"
expect --stderr "compare: missing report" 2 "/nonexistent.json: cannot open" "$posenc" compare /nonexistent.json
expect --stderr "list: missing vectors" 2 "/nonexistent/MANIFEST: cannot open" "$posenc" list --vectors /nonexistent

# Tampered vector sets are refused, naming the file; --own-vectors trusts a folder's own MANIFEST.
tampered=$(mktemp -d)
trap 'rm -rf "$tampered"' EXIT
fresh_copy() { rm -rf "$tampered/v"; cp -r "$vectors" "$tampered/v"; }
fresh_copy
echo " " >>"$tampered/v/alibi/slopes.json"
expect --stderr "modified file refused" 2 "alibi/slopes.json: SHA-256 differs from MANIFEST" \
  "$posenc" conform --vectors "$tampered/v" --filter alibi/slopes
fresh_copy
truncate -s 1000 "$tampered/v/rope/none.json"
expect --stderr "truncated file refused" 2 "rope/none.json: SHA-256 differs from MANIFEST (modified or truncated" \
  "$posenc" conform --vectors "$tampered/v" --filter rope/none
fresh_copy
cp "$tampered/v/alibi/slopes.json" "$tampered/v/alibi/mine.json"
expect --stderr "extra file refused" 2 "alibi/mine.json: not listed in MANIFEST" "$posenc" conform --vectors "$tampered/v"
fresh_copy
# A file edited together with its MANIFEST line: only the shipped MANIFEST's own hash catches it.
sed -i 's/"0x1p-8"/"0x1p-7"/' "$tampered/v/alibi/slopes.json"
new_hash=$(sha256sum "$tampered/v/alibi/slopes.json" | cut -d' ' -f1)
sed -i "s/^[0-9a-f]*\( .* alibi\/slopes.json\)$/$new_hash\1/" "$tampered/v/MANIFEST"
expect --stderr "file and MANIFEST edited together refused" 2 "MANIFEST: SHA-256" \
  "$posenc" conform --vectors "$tampered/v" --filter alibi/slopes
expect --stderr "... and the message says how to run own vectors" 2 "--own-vectors runs on vectors of your own" \
  "$posenc" list --vectors "$tampered/v"
expect "--own-vectors trusts the folder (the edited slope now fails the reference)" 0 "NOT CONFORMANT" \
  bash -c "'$posenc' conform --vectors '$tampered/v' --own-vectors --filter alibi/slopes --property-cases 0 --profile exact; true"

# --filter and --exclude (SPEC.md section 9): paths match only themselves, globs, several of each.
# The files a selection lists, judged at position 0 only (--max-position 0: every file is still
# listed): the selection is under test here, not the reference (all of a file's cases judged take
# 1.8 s a call in Release, 6 s under ASan).
files() {
  "$posenc" conform --impl reference --formats f64 --property-cases 0 --max-position 0 "$@" 2>&1 |
    grep -o '^[a-z]*/[a-z0-9_]*\.json' | tr '\n' ' '
}
check_files() {
  local name=$1 want=$2; shift 2
  local got; got=$(files "$@")
  if [ "$got" = "$want" ]; then ok "$name"; else fail "$name: got '$got', expected '$want'"; fi
}
check_files "an exact path matches only itself" "rope/none.json " --filter rope/none
check_files "with .json too" "rope/none.json " --filter rope/none.json
check_files "several patterns, a glob among them" "alibi/slopes.json rope/yarn.json " --filter 'rope/y*' --filter alibi/slopes
check_files "comma-separated" "alibi/slopes.json rope/none.json " --filter rope/none,alibi/slopes
check_files "a family minus a glob" "rope/dynamic.json rope/invalid.json " --filter rope --exclude 'rope/[l-z]*'
expect "a pattern that matches no file is refused" 2 "invalid --filter = 'rope/n'" \
  "$posenc" conform --impl reference --filter rope/n --property-cases 0
expect "an exclude that matches no file is refused" 2 "invalid --exclude = 'rope/linaer'" \
  "$posenc" conform --impl reference --filter rope/none --exclude rope/linaer --property-cases 0

# --checks selects the verdict's parts; anything else is refused naming the option, the value
# and the allowed values.
expect "--checks validation judges the invalid cases alone" 0 "accuracy: not checked" \
  "$posenc" conform --impl reference --filter rope/invalid --checks validation
grep -q "^properties: not checked" <<<"$expect_output" && grep -q "^validation: CONFORMANT, 108 checks judged (f64 27, f32 27, bf16 27, f16 27)" <<<"$expect_output" &&
  ok "--checks validation: properties not checked, the 27 invalid cases judged in each format" || fail "--checks validation: $expect_output"
expect --stderr "--checks: an unknown part is refused" 2 \
  "invalid --checks = 'accuracy,speed': must be a list of accuracy, validation, properties" \
  "$posenc" conform --impl reference --checks accuracy,speed
expect --stderr "verify --checks has no properties" 2 "invalid --checks = 'properties'" \
  "$posenc" verify --results /dev/null --checks properties

# --property-formats chooses the formats of the properties (default: every one the
# implementation answers in: all four for the reference).
expect "the reference's properties run in every format" 0 "properties: CONFORMANT, 108 properties judged (f64 27, f32 27, bf16 27, f16 27)" \
  "$posenc" conform --impl reference --filter alibi/slopes --property-cases 5
expect "--property-formats bf16 runs them in bf16 alone" 0 "properties: CONFORMANT, 27 properties judged (bf16 27)" \
  "$posenc" conform --impl reference --filter alibi/slopes --property-cases 5 --property-formats bf16
expect --stderr "--property-formats: an unknown format is refused" 2 \
  "invalid --property-formats = 'f32,f8': must be a list of f64, f32, bf16, f16" \
  "$posenc" conform --impl reference --property-formats f32,f8

# Nothing but the report: no RapidCheck banner on stderr or stdout, the verdict on its own line.
banner=$("$posenc" conform --impl reference --filter alibi/slopes --property-cases 2 2>&1)
if ! grep -q "Using configuration" <<<"$banner" && [[ "$(tail -n 1 <<<"$banner")" == "CONFORMANT: "* ]]; then
  ok "no RapidCheck banner"
else
  fail "RapidCheck banner or a verdict not on its own line: $(tail -n 3 <<<"$banner")"
fi

expect_summary
