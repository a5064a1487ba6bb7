#!/usr/bin/env bash
# Generation is deterministic: regenerating from this commit reproduces vectors/ byte for byte,
# and vectors/MANIFEST's hashes match the files (checked with coreutils' sha256sum).
set -u
posenc="$1"
vectors="$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
source "$(dirname "$0")/../lib/expect.sh"
"$posenc" generate --out "$out" || { echo "FAIL: generate"; exit 1; }
if diff -r --exclude=schema "$vectors" "$out" >/dev/null; then
  ok "regenerated vectors are byte-identical to vectors/"
else
  fail "regenerated vectors differ from vectors/ (run: build/posenc generate --out vectors):"
  diff -rq --exclude=schema "$vectors" "$out" | head -20
fi
checked=0
manifest_failures=$expect_failed
while read -r sha cases path; do
  case "$sha" in "#"*|"") continue ;; esac
  actual=$(sha256sum "$vectors/$path" | cut -d' ' -f1)
  if [ "$actual" != "$sha" ]; then fail "MANIFEST hash of $path"; fi
  checked=$((checked + 1))
done < "$vectors/MANIFEST"
listed=$(find "$vectors" -name '*.json' -not -path '*/schema/*' | wc -l)
if [ "$listed" -ne "$checked" ]; then fail "MANIFEST lists $checked files, vectors/ has $listed"; fi
if [ "$expect_failed" -eq "$manifest_failures" ]; then ok "MANIFEST matches the $checked files"; fi
expect_summary
