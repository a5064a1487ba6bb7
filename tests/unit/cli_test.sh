#!/usr/bin/env bash
# The CLI's documented forms work and print what the README says; bad usage exits with status 2.
set -u
posenc="$1"
failures=0
passes=0
pass() { echo "ok: $1"; passes=$((passes + 1)); }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

expect_output() {  # description, expected substring, command...
  local what="$1" needle="$2"; shift 2
  local out; out=$("$@" 2>&1); local rc=$?
  if [ $rc -eq 0 ] && grep -qF -- "$needle" <<<"$out"; then pass "$what"; else fail "$what (rc=$rc): $out"; fi
}

expect_status() {  # description, status, expected substring of stderr, command...
  local what="$1" status="$2" needle="$3"; shift 3
  local err; err=$("$@" 2>&1 >/dev/null); local rc=$?
  if [ $rc -eq "$status" ] && grep -qF -- "$needle" <<<"$err"; then pass "$what"; else fail "$what (rc=$rc): $err"; fi
}

q=0x1.017ed89db8441p-3,-0x1.0e8cfe9bd45ccp-3,0x1.47e57a468b06dp-1,0x1.adabbec84d4f0p-4,-0x1.1243418e643edp-1,0x1.7245f95ced1e6p-2,0x1.4dd2f26bd103cp+0,0x1.e4e7cbc69bca3p-1
k=-0x1.684ffc1daaf28p-1,-0x1.43f2a959cc8bbp+0,-0x1.3f1dd4920f4fbp-1,0x1.528adc38b0ce3p-5,-0x1.299a9bc1a2383p+1,-0x1.c015d809d257ep-3,-0x1.3ef405142e27ep+0,-0x1.76ebbf28c26f7p-1

# sin(2) = 0.9092974268256816953960198659117448427022549714478902683789... (OEIS A049469)
expect_output "sinusoidal d=4 position 2 (exact sin 2)" '"exact": "9.0929742682568169539601986591174484270225e-01"' \
  "$posenc" eval sinusoidal --dim 4 --position 2 --json
expect_output "sinusoidal json f64 of sin 2" '"f64": "0x1.d18f6ead1b446p-1"' "$posenc" eval sinusoidal --dim 4 --position 2 --json
expect_output "sinusoidal-dot seed 000" '"exact": "2.4910209' "$posenc" eval sinusoidal-dot --dim 512 --positions 10,11 --json
expect_output "rope seed 003 rotation" '"family": "rope"' "$posenc" eval rope --head-dim 8 --position 5000 --x "$q" --json
expect_output "rope-dot seed 003" '"exact": "-1.763129' "$posenc" eval rope-dot --head-dim 8 --positions 3,1 --q "$q" --k "$k" --json
expect_output "rope yarn table" 'cos[0]' "$posenc" eval rope --head-dim 64 --position 100000 --scaling yarn --factor 40 \
  --original-max-positions 4096 --mscale 0.707 --mscale-all-dim 0.707
expect_output "alibi slopes 12 heads" '"name": "slope[11]"' "$posenc" eval alibi --heads 12 --json
expect_output "alibi biases" '"name": "bias[0]"' "$posenc" eval alibi --heads 12 --query-position 7 --key-position 2 --json
expect_output "alibi slope 8 heads head 0 is 1/2" '"f64": "0x1p-1"' "$posenc" eval alibi --heads 8 --head 0 --json

expect_status "odd head_dim" 2 "invalid rope.head_dim = 7: must be an even integer >= 2" \
  "$posenc" eval rope --head-dim 7 --position 1 --x 1,2,3,4,5,6,7
expect_status "scaling option without scaling" 2 "invalid rope.scaling.factor = 4: must be absent for scaling 'none'" \
  "$posenc" eval rope --head-dim 2 --position 1 --factor 4
expect_status "bad number" 2 "invalid --position = 'abc'" "$posenc" eval sinusoidal --dim 4 --position abc
expect_status "unknown option" 2 "--frobnicate" "$posenc" eval sinusoidal --dim 4 --position 1 --frobnicate
expect_status "missing required option" 2 "--dim is required" "$posenc" eval sinusoidal --position 1
expect_status "wrong vector length" 2 "invalid rope.x = (3 values): must be exactly 8 values" \
  "$posenc" eval rope --head-dim 8 --position 1 --x 1,2,3
expect_status "alibi zero heads" 2 "invalid alibi.n_heads = 0" "$posenc" eval alibi --heads 0
expect_status "causal key after query" 2 "invalid alibi.key_position = 9" \
  "$posenc" eval alibi --heads 4 --query-position 3 --key-position 9

expect_output "conform: the reference is exact" "CONFORMANT" "$posenc" conform --impl reference --profile exact --filter alibi
expect_status "conform: unknown profile" 2 "invalid --profile = 'fuzzy'" "$posenc" conform --profile fuzzy
expect_status "conform: missing vectors" 2 "/nonexistent/MANIFEST: cannot open" "$posenc" conform --vectors /nonexistent
expect_status "conform: unknown implementation" 2 "invalid --impl = 'cuda'" "$posenc" conform --impl cuda

# Everyday commands: the help names every subcommand the README uses, each subcommand's help
# works, and `list` counts what MANIFEST lists.
for sub in eval seeds generate list compare conform verify; do
  expect_output "--help lists $sub" "  $sub " "$posenc" --help
  expect_output "$sub --help" "Usage:" "$posenc" "$sub" --help
done
for option in --impl --profile --bound --vectors --filter --formats --report --junit --html --seed --property-cases --timeout; do
  expect_output "conform --help documents $option" "$option" "$posenc" conform --help
done
vectors=$(dirname "$0")/../../vectors
cases=$(awk '!/^#/ {n += $2; f += 1} END {print f " files, " n " cases"}' "$vectors/MANIFEST")
expect_output "list: $cases as MANIFEST says" "$cases" "$posenc" list --vectors "$vectors"
expect_output "list: RoPE scalings" "none, linear, ntk, dynamic, yarn, llama3, longrope" "$posenc" list --vectors "$vectors"
expect_status "compare: missing report" 2 "/nonexistent.json: cannot open" "$posenc" compare /nonexistent.json
expect_status "list: missing vectors" 2 "/nonexistent/MANIFEST: cannot open" "$posenc" list --vectors /nonexistent

# Tampered vector sets are refused, naming the file; --own-vectors trusts a folder's own MANIFEST.
tampered=$(mktemp -d)
trap 'rm -rf "$tampered"' EXIT
fresh_copy() { rm -rf "$tampered/v"; cp -r "$vectors" "$tampered/v"; }
fresh_copy
echo " " >>"$tampered/v/alibi/slopes.json"
expect_status "modified file refused" 2 "alibi/slopes.json: SHA-256 differs from MANIFEST" \
  "$posenc" conform --vectors "$tampered/v" --filter alibi/slopes
fresh_copy
truncate -s 1000 "$tampered/v/rope/none.json"
expect_status "truncated file refused" 2 "rope/none.json: SHA-256 differs from MANIFEST (modified or truncated" \
  "$posenc" conform --vectors "$tampered/v" --filter rope/none
fresh_copy
cp "$tampered/v/alibi/slopes.json" "$tampered/v/alibi/mine.json"
expect_status "extra file refused" 2 "alibi/mine.json: not listed in MANIFEST" "$posenc" conform --vectors "$tampered/v"
fresh_copy
# A file edited together with its MANIFEST line: only the shipped MANIFEST's own hash catches it.
sed -i 's/"0x1p-8"/"0x1p-7"/' "$tampered/v/alibi/slopes.json"
new_hash=$(sha256sum "$tampered/v/alibi/slopes.json" | cut -d' ' -f1)
sed -i "s/^[0-9a-f]*\( .* alibi\/slopes.json\)$/$new_hash\1/" "$tampered/v/MANIFEST"
expect_status "file and MANIFEST edited together refused" 2 "MANIFEST: SHA-256" \
  "$posenc" conform --vectors "$tampered/v" --filter alibi/slopes
expect_status "... and the message says how to run own vectors" 2 "--own-vectors runs on vectors of your own" \
  "$posenc" list --vectors "$tampered/v"
expect_output "--own-vectors trusts the folder (the edited slope now fails the reference)" "NOT CONFORMANT" \
  bash -c "'$posenc' conform --vectors '$tampered/v' --own-vectors --filter alibi/slopes --property-cases 0 --profile exact; true"

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
