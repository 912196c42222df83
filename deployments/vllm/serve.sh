#!/usr/bin/env bash
# Start a vLLM OpenAI-compatible server for NKW on one GPU host.
# Settings come from vllm.env (copy and edit it per environment). Every flag below is in
# verified_flags.txt, checked with vLLM 0.33.0's own argument parser (see README.md).
set -euo pipefail
cd "$(dirname "$0")"
set -a; source "${NKW_VLLM_ENV:-vllm.env}"; set +a

args=(
  serve "$NKW_VLLM_MODEL"
  --host "$NKW_VLLM_HOST" --port "$NKW_VLLM_PORT"
  --served-model-name "$NKW_VLLM_SERVED_NAME"
  --max-model-len "$NKW_VLLM_MAX_MODEL_LEN"
  --gpu-memory-utilization "$NKW_VLLM_GPU_MEMORY"
  --tensor-parallel-size "$NKW_VLLM_TENSOR_PARALLEL"
  --max-num-seqs "$NKW_VLLM_MAX_NUM_SEQS"
  --enable-prefix-caching
  --enable-prompt-tokens-details
  --structured-outputs-config.backend "$NKW_VLLM_STRUCTURED_BACKEND"
  --enable-auto-tool-choice --tool-call-parser "$NKW_VLLM_TOOL_PARSER"
)
if [[ -n "${NKW_VLLM_API_KEY:-}" ]]; then
  args+=(--api-key "$NKW_VLLM_API_KEY")
fi
# NKW_VLLM_BIN: another vllm executable (a virtualenv's), or a stand-in that prints its arguments.
exec "${NKW_VLLM_BIN:-vllm}" "${args[@]}" ${NKW_VLLM_EXTRA_ARGS:-}
