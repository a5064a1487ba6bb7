#!/usr/bin/env bash
# peers/llamacpp/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: llama.cpp's ggml CPU RoPE (the plugin
# build/peers/llamacpp/posenc_llamacpp_plugin.so, or $POSENC_LLAMACPP_PLUGIN) judged by
# `posenc conform` under PROFILE, writing OUTDIR/llamacpp.PROFILE.json (its JSON report; the
# attention rows OUTDIR/llamacpp-MODE.PROFILE.json, the modes of plugin/llamacpp_plugin.cpp) and
# OUTDIR/llamacpp.unsupported.txt (each vector file and group the plugin answered as
# unsupported, with the reason, peers/llamacpp/README.md) and OUTDIR/llamacpp.rows.json; or
# OUTDIR/llamacpp.skipped, one line of reason, when the plugin could not be built here. FILTER restricts the vector files
# (`posenc conform --filter`). The exit status is 0 whatever the verdict (the report holds it);
# non-zero only when posenc itself fails (an error, status 2).
set -euo pipefail
cli=$1 out=$2 profile=$3 filter=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
plugin_dir=$(cd "$(dirname "$cli")" && pwd)/peers/llamacpp
plugin=${POSENC_LLAMACPP_PLUGIN:-$plugin_dir/posenc_llamacpp_plugin.so}
mkdir -p "$out"
rm -f "$out/llamacpp.skipped"
if [[ ! -f $plugin ]]; then
  if [[ -f $plugin_dir/unavailable ]]; then
    echo "llama.cpp: $(cat "$plugin_dir/unavailable")" >"$out/llamacpp.skipped"
  else
    echo "llama.cpp: plugin $plugin not built (configure with -DPOSENC_PEER_TESTS=ON, build target posenc_llamacpp_plugin)" \
      >"$out/llamacpp.skipped"
  fi
  exit 0
fi
files=()
if [[ -n $filter ]]; then
  read -ra files <<<"${filter//,/ }"  # several files: space- or comma-separated, as --filter takes them
fi
# conform NAME ARGS...: one row's `posenc conform`, OUTDIR/NAME.PROFILE.json and .txt.
conform() {
  local name=$1 status=0
  shift
  "$cli" conform --impl "$plugin" --profile "$profile" --report "$out/$name.$profile.json" "$@" \
    >"$out/$name.$profile.txt" 2>&1 || status=$?
  if ((status > 1)); then
    cat "$out/$name.$profile.txt" >&2
    exit "$status"
  fi
}
rope_files=() attention_files=()
for f in "${files[@]}"; do
  if [[ $f == attention* ]]; then attention_files+=("$f"); else rope_files+=("$f"); fi
done
# The RoPE row: every file but attention's (or the filter's).
if ((${#files[@]} == 0)); then
  conform llamacpp --exclude 'attention/*'
elif ((${#rope_files[@]} > 0)); then
  conform llamacpp --filter "${rope_files[@]}"
fi
# The attention rows (plugin/llamacpp_plugin.cpp): flash attention and the soft_max path, with
# the KV cache in f16 (llama.cpp's default) or f32. Only accuracy: invalid parameters are the
# RoPE row's business, and ggml takes tensors.
if ((${#files[@]} == 0)); then attention_files=(attention); fi
if ((${#attention_files[@]} > 0)); then
  for mode in flash-kvf16 flash-kvf32 softmax-kvf16 softmax-kvf32; do
    POSENC_LLAMACPP_ATTENTION=$mode conform "llamacpp-$mode" --filter "${attention_files[@]}" --checks accuracy
  done
fi
reports=()
for r in "$out"/llamacpp*."$profile".json; do reports+=("$r"); done
"$here/unsupported.py" "${reports[@]}" >"$out/llamacpp.unsupported.txt"
# The table's framework, version and dtype columns (peers/README.md), from the RoPE row's report's
# implementation line (the attention rows have a table of their own).
[ -f "$out/llamacpp.$profile.json" ] || exit 0
python3 - "$out/llamacpp.$profile.json" "$out/llamacpp.rows.json" <<'PY'
import json, re, sys
implementation = json.load(open(sys.argv[1]))["implementation"]
found = re.search(r"llama-cpp-python (\S+) \(ggml (\S+)\)", implementation)
version = f"ggml {found.group(2)} (llama-cpp-python {found.group(1)})" if found else implementation
json.dump({"llamacpp": {"framework": "llama.cpp ggml (CPU ggml_rope_ext)", "version": version,
                        "dtype": "float32; float16 storage"}}, open(sys.argv[2], "w"), indent=1)
PY
