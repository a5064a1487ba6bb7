#!/usr/bin/env bash
# peers/llamacpp/run.sh POSENC_CLI OUTDIR PROFILE [FILTER]: llama.cpp's ggml CPU RoPE (the plugin
# build/peers/llamacpp/posenc_llamacpp_plugin.so, or $POSENC_LLAMACPP_PLUGIN) judged by
# `posenc conform` under PROFILE, writing OUTDIR/llamacpp.PROFILE.json (its JSON report) and
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
args=(conform --impl "$plugin" --profile "$profile" --report "$out/llamacpp.$profile.json")
if [[ -n $filter ]]; then
  read -ra files <<<"$filter"  # several files: space- or comma-separated, as --filter takes them
  args+=(--filter "${files[@]}")
fi
status=0
"$cli" "${args[@]}" >"$out/llamacpp.$profile.txt" 2>&1 || status=$?
if ((status > 1)); then
  cat "$out/llamacpp.$profile.txt" >&2
  exit "$status"
fi
"$here/unsupported.py" "$out/llamacpp.$profile.json" >"$out/llamacpp.unsupported.txt"
# The table's framework, version and dtype columns (peers/README.md), from the report's
# implementation line.
python3 - "$out/llamacpp.$profile.json" "$out/llamacpp.rows.json" <<'PY'
import json, re, sys
implementation = json.load(open(sys.argv[1]))["implementation"]
found = re.search(r"llama-cpp-python (\S+) \(ggml (\S+)\)", implementation)
version = f"ggml {found.group(2)} (llama-cpp-python {found.group(1)})" if found else implementation
json.dump({"llamacpp": {"framework": "llama.cpp ggml (CPU ggml_rope_ext)", "version": version,
                        "dtype": "float32; float16 storage"}}, open(sys.argv[2], "w"), indent=1)
PY
