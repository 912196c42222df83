#!/usr/bin/env bash
# Start a vLLM OpenAI-compatible server for NKW on one GPU host.
# Settings come from vllm.env (copy and edit it per environment).
set -euo pipefail
cd "$(dirname "$0")"
set -a; source "${NKW_VLLM_ENV:-vllm.env}"; set +a

exec vllm serve "$NKW_VLLM_MODEL" \
  --host "$NKW_VLLM_HOST" --port "$NKW_VLLM_PORT" \
  --served-model-name "$NKW_VLLM_SERVED_NAME" \
  --max-model-len "$NKW_VLLM_MAX_MODEL_LEN" \
  --gpu-memory-utilization "$NKW_VLLM_GPU_MEMORY" \
  --tensor-parallel-size "$NKW_VLLM_TENSOR_PARALLEL" \
  --max-num-seqs "$NKW_VLLM_MAX_NUM_SEQS" \
  --enable-prefix-caching \
  "${NKW_VLLM_GUIDED_FLAG:---guided-decoding-backend}" "$NKW_VLLM_GUIDED_BACKEND" \
  ${NKW_VLLM_API_KEY:+--api-key "$NKW_VLLM_API_KEY"} \
  ${NKW_VLLM_EXTRA_ARGS:-}
