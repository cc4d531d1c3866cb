#!/usr/bin/env bash
# The host-proxy GPU test and latency benchmark on a GPU machine.
#   scripts/gpu/cuda_host_proxy.sh stage   here: build with nvcc (sm_90) and copy the two binaries to .devbin/
#   scripts/gpu/cuda_host_proxy.sh run     there: run them from .devbin/, table on stdout, JSON to $OUT (or .)
# The GPU machines have CUDA but not Debian's -dev packages, so the binaries are built here; they
# need only libfmt.so.9 and libstdc++ at run time, which those machines have.
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
  stage)
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DRAILCHECK_BUILD_BENCH=OFF >/dev/null
    cmake --build build-gpu -j "$(nproc)" --target cuda_host_proxy_gpu_check cuda_host_proxy_bench
    mkdir -p .devbin
    cp build-gpu/backends/hw/cuda/cuda_host_proxy_gpu_check build-gpu/backends/hw/cuda/cuda_host_proxy_bench .devbin/
    echo "staged in .devbin/ (carry it: run(carry=[\".devbin\"]))"
    ;;
  run)
    out="${OUT:-.}"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    .devbin/cuda_host_proxy_gpu_check | tee "$out/cuda_gpu_check.txt"
    .devbin/cuda_host_proxy_bench "${ITERATIONS:-20000}" "$out/cuda_host_proxy.json" | tee "$out/cuda_host_proxy.txt"
    ;;
  *) echo "usage: $0 stage|run" >&2; exit 2 ;;
esac
