#!/usr/bin/env bash
# Attention through results files and `posenc serve` (SPEC.md sections 7, 9 and 10): the vectors'
# own values pass, as O then L or as O alone (L then not judged, and counted); a wrong O or L
# element fails, named as O[query, head, column] or L[query, head]; a wrong number of values, or
# a scoreFormat or probabilityFormat that is no format, is refused naming the entry or field;
# the declared roundings reach the reports, and --probability-format wins over the file's.
# attention_results.py writes the files (Debian's /usr/bin/python3: the standard library only).
set -u
posenc="$1"
source_dir="$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/../lib/expect.sh"
write() { /usr/bin/python3 "$source_dir/tests/suite/attention_results.py" "$source_dir/vectors" "$@"; }
json() { /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

write f32 >"$out/f32.json" && write f32 --without-lse >"$out/f32_o.json" && write bf16 --without-lse >"$out/bf16_o.json" &&
  write f32 --perturb O >"$out/wrong_o.json" && write f32 --perturb L >"$out/wrong_l.json" &&
  write f32 --probability-format bf16 --score-format f32 >"$out/declared.json" ||
  { echo "FAIL: attention_results.py did not run"; exit 1; }

expect "O then L, the vectors' own f32 values, pass strict" 0 "CONFORMANT: 126 checks judged (f32 126); not judged" \
  "$posenc" verify --results "$out/f32.json" --profile strict --filter attention
expect "O alone passes, counted as judged on O alone" 0 "CONFORMANT: 126 checks judged (f32 126), 90 on O alone (L not given)" \
  "$posenc" verify --results "$out/f32_o.json" --profile strict --filter attention --report "$out/o_alone.json"
[ "$(json "$out/o_alone.json" 'r["summary"]["accuracy"]["judged"]["f32"]["withoutL"]')" = 90 ] &&
  ok "the JSON report counts them (withoutL)" || fail "withoutL in the JSON report"
expect "compare reads withoutL back" 0 "CONFORMANT" "$posenc" compare "$out/o_alone.json"
expect "bf16 O alone passes strict too" 0 "on O alone (L not given)" \
  "$posenc" verify --results "$out/bf16_o.json" --profile strict --filter attention
expect "a wrong O element fails, named" 1 "tcId 1 f32: O[query 0, head 0, column 0] = " \
  "$posenc" verify --results "$out/wrong_o.json" --profile strict --filter attention/alibi
expect "a wrong L element fails, named" 1 "tcId 1 f32: L[query 0, head 0] = " \
  "$posenc" verify --results "$out/wrong_l.json" --profile strict --filter attention/alibi
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["results"][0]["values"].pop(); json.dump(d, open(sys.argv[2], "w"))' \
  "$out/f32.json" "$out/short.json"
expect "neither O then L nor O alone: refused" 2 \
  "field 'results[0].values': 135 values; attention/alibi.json tcId 1 has 136 outputs (O then L), or 128 (O alone)" \
  "$posenc" verify --results "$out/short.json"

# The declarations (SPEC.md section 5): in the header and the JSON report; the command line wins.
expect "declared roundings in the header" 0 "profile: strict; scores rounded to f32 for f32; probabilities rounded to bf16 for f32" \
  "$posenc" verify --results "$out/declared.json" --profile strict --filter attention --report "$out/declared_report.json"
[ "$(json "$out/declared_report.json" 'r["scoreFormats"], r["probabilityFormats"]')" = "{'f32': 'f32'} {'f32': 'bf16'}" ] &&
  ok "scoreFormats and probabilityFormats in the JSON report" || fail "roundings in the JSON report"
expect "--probability-format none wins over the file's" 0 "CONFORMANT" "$posenc" verify --results "$out/declared.json" \
  --profile strict --filter attention --probability-format none --report "$out/overridden.json"
[ "$(json "$out/overridden.json" 'r["probabilityFormats"]')" = "{}" ] && ! grep -q "probabilities rounded" <<<"$expect_output" &&
  ok "overridden: no probability format in the report" || fail "--probability-format none"
# A declared P widens the bound, so the same exact values use less of it.
margin() { json "$1" 'max(g["worstMargin"]["value"] for g in r["groups"])'; }
/usr/bin/python3 -c 'import sys; a, b = map(float, sys.argv[1:]); assert 0 < a < b, sys.argv' \
  "$(margin "$out/declared_report.json")" "$(margin "$out/overridden.json")" &&
  ok "the declared probability format widens the bound" || fail "declared bound not wider"
for value in x f32=f8 f32=bf16,f32=f16; do
  expect "--score-format $value is refused" 2 "--score-format" \
    "$posenc" verify --results "$out/f32.json" --score-format "$value"
done
sed 's/"probabilityFormat": "bf16"/"probabilityFormat": "b16"/' "$out/declared.json" >"$out/bad.json"
expect "a probabilityFormat that is no format is refused" 2 "field 'probabilityFormat': 'b16': expected f64, f32, bf16 or f16" \
  "$posenc" verify --results "$out/bad.json"

# posenc serve: the session says its roundings; a judge request may give O alone; finish counts it.
/usr/bin/python3 - "$out/f32_o.json" "$out/requests" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
first = results[0]
with open(sys.argv[2], "w") as f:
    print(json.dumps({"op": "session"}), file=f)
    print(json.dumps({"op": "judge", "file": first["file"], "format": "f32",
                      "results": [{"tcId": first["tcId"], "values": first["values"]}]}), file=f)
    print(json.dumps({"op": "judge", "file": first["file"], "format": "f32",
                      "results": [{"tcId": first["tcId"], "values": first["values"][:-1]}]}), file=f)
    print(json.dumps({"op": "finish", "filter": ["attention/alibi"]}), file=f)
PY
answers=$("$posenc" serve --profile strict --filter attention --probability-format f32=bf16 <"$out/requests")
/usr/bin/python3 - "$answers" <<'PY' && ok "serve: roundings, O alone judged and counted, a wrong count refused" || fail "serve answers: $answers"
import json, sys
session, judged, refused, finish = [json.loads(line) for line in sys.argv[1].splitlines()]
assert session["probabilityFormats"] == {"f32": "bf16"} and session["scoreFormats"] == {}, session
assert judged["verdicts"][0]["verdict"] == "pass", judged
assert "the case has 136 outputs (O then L), or 128 (O alone)" in refused["error"], refused
assert "1 on O alone (L not given)" in finish["summary"], finish["summary"]
assert "probabilities rounded to bf16 for f32" in finish["summary"], finish["summary"]
PY
expect_summary
