#!/usr/bin/env bash
# Health check for a vLLM server: the /health endpoint, then NKW's own end-to-end check
# (model listed, one tiny structured request, latency). Exit code 0 when healthy.
set -euo pipefail
URL="${1:-http://127.0.0.1:8000}"
MODEL="${2:-Qwen/Qwen3-30B-A3B-Instruct-2507}"
curl -fsS --max-time 5 "${URL%/v1}/health" >/dev/null || { echo "vLLM /health failed at ${URL%/v1}"; exit 1; }
exec nkw llm check --llm-url "$URL" --model "$MODEL"
