#!/usr/bin/env bash
# Generation is deterministic: regenerating from this commit reproduces vectors/ byte for byte,
# and vectors/MANIFEST's hashes match the files (checked with coreutils' sha256sum).
set -u
posenc="$1"
vectors="$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failures=0
passed=0
"$posenc" generate --out "$out" || { echo "FAIL: generate"; exit 1; }
if diff -r --exclude=schema "$vectors" "$out" >/dev/null; then
  echo "ok: regenerated vectors are byte-identical to vectors/"
  passed=$((passed + 1))
else
  echo "FAIL: regenerated vectors differ from vectors/ (run: build/posenc generate --out vectors):"
  diff -rq --exclude=schema "$vectors" "$out" | head -20
  failures=$((failures + 1))
fi
checked=0
manifest_failures=$failures
while read -r sha cases path; do
  case "$sha" in "#"*|"") continue ;; esac
  actual=$(sha256sum "$vectors/$path" | cut -d' ' -f1)
  if [ "$actual" != "$sha" ]; then echo "FAIL: MANIFEST hash of $path"; failures=$((failures + 1)); fi
  checked=$((checked + 1))
done < "$vectors/MANIFEST"
listed=$(find "$vectors" -name '*.json' -not -path '*/schema/*' | wc -l)
if [ "$listed" -ne "$checked" ]; then echo "FAIL: MANIFEST lists $checked files, vectors/ has $listed"; failures=$((failures + 1)); fi
if [ "$failures" -eq "$manifest_failures" ]; then echo "ok: MANIFEST matches the $checked files"; passed=$((passed + 1)); fi
echo "$passed passed, $((2 - passed)) failed"
[ "$failures" -eq 0 ]
