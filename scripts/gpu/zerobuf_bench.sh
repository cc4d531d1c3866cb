#!/usr/bin/env bash
# The zero-buffer latency benchmark (issue 29): builds libzerobuf-railcheck.so (through
# zerobuf_gpu.sh), starts one rank per GPU (zerobuf_bench.py), and measures every op and size
# against NCCL in the same run, graph-captured and eager, every zero-buffer path checked bit-exact
# first. NCCL runs twice: through torch.distributed (its default buffers) and with its buffers in a
# registered symmetric window (nccl_sym.py, NCCL 2.28's symmetric kernels). A short run first
# (--probe-kernels, NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, nothing timed) records which NCCL
# kernel each op and size ran; the timed run puts it in its rows. Writes zerobuf_bench.json,
# nccl_kernels.json and the ranks' logs to $OUT and prints the tables (zerobuf_bench_table.py).
# Needs at least 2 GPUs (exit 77 otherwise).
#
# Inputs (environment):
#   OUT        where the JSON and logs go (default: ./zerobuf-bench-out)
#   NRANKS     ranks (default: every GPU, one each). More ranks than GPUs: ranks share GPUs round
#              robin, each its own NCCL "host" (NCCL_HOSTID), and nothing is timed (the GPU
#              time-slices between processes): a correctness check of the paths at that rank count
#   MAX_BYTES  largest size (default 256 MiB); MIN_BYTES (default 8)
#   PATHS      zero-buffer paths to measure (default auto,ll,direct)
#   LARGE_HEAP window's large heap in bytes (default: two tensors of MAX_BYTES, plus 64 MiB)
#   NCCL_SYM   0: leave out NCCL with a symmetric window (default 1; always 0 when ranks share GPUs)
#   EXTRA      more arguments for zerobuf_bench.py (e.g. --no-eager, --ops all_reduce)
#   ZEROBUF_*  the library's tunables (zerobuf_abi.h), passed through
# Exit: 0 every call bit-exact, 1 a wrong result or a failed rank, 2 the build failed, 77 no GPUs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/zerobuf-bench-out}"
mkdir -p "$out"
lib="$out/libzerobuf-railcheck.so"
BUILD_ONLY=1 LIB_OUT="$lib" OUT="$out" "$here/zerobuf_gpu.sh" || exit 2
command -v nvidia-smi >/dev/null || { echo "zerobuf_bench: no nvidia-smi" >&2; exit 77; }
gpus=$(nvidia-smi -L | grep -c '^GPU')
n="${NRANKS:-$gpus}"
(( gpus >= 1 && n >= 2 && n <= 8 )) || { echo "zerobuf_bench: needs 2..8 ranks and a GPU (have $gpus GPUs)" >&2; exit 77; }
shared=0; (( n > gpus )) && shared=1
max="${MAX_BYTES:-268435456}"
# The benchmark allocates one input and one output of MAX_BYTES in the window, once, and every size
# takes views of them: room for those two and PyTorch's 2 MiB rounding.
heap="${LARGE_HEAP:-$(( 2 * max + 64 * 1048576 ))}"
sym=(); [[ "${NCCL_SYM:-1}" == 0 || $shared == 1 ]] && sym=(--no-nccl-sym)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
# Every rank's bootstrap authenticates with one job key (docs/security.md): a fresh one per run.
if [[ -z "${RAILCHECK_JOB_KEY_FILE:-}${RAILCHECK_JOB_KEY:-}${RAILCHECK_JOB_AUTH:-}" ]]; then
  (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$out/job.key")
  export RAILCHECK_JOB_KEY_FILE="$out/job.key"
fi
# Which kernel NCCL runs for each op and size (its TUNING log line): a run of its own, untimed.
kernels=()
if [[ ${#sym[@]} == 0 && $shared == 0 ]]; then
  pids=()
  for (( r = 0; r < n; r++ )); do
    # shellcheck disable=SC2086
    NCCL_HOSTID=zerobuf-host NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$out/nccl_probe.rank$r.log" \
    timeout 300 python3 "$here/zerobuf_bench.py" --rank "$r" --nranks "$n" --lib "$lib" --max-bytes "$max" \
      --min-bytes "${MIN_BYTES:-8}" --probe-kernels "$out/nccl_kernels.json" --nccl-log "$out/nccl_probe.rank$r.log" \
      --store-port 29510 --out /dev/null ${EXTRA:-} >"$out/probe$r.log" 2>&1 &
    pids+=($!)
  done
  prc=0
  for p in "${pids[@]}"; do wait "$p" || prc=1; done
  if (( prc == 0 )) && [[ -f "$out/nccl_kernels.json" ]]; then
    kernels=(--kernels "$out/nccl_kernels.json")
  else
    echo "zerobuf_bench: the NCCL kernel probe failed (rows go without kernel names)" >&2
    tail -n 20 "$out/probe0.log" >&2
  fi
fi
pids=()
for (( r = 0; r < n; r++ )); do
  per_rank=()
  (( shared )) && per_rank=(--device $(( r % gpus )) --check-only)
  # shellcheck disable=SC2086
  NCCL_HOSTID=$( (( shared )) && echo "zerobuf-rank-$r" || echo "zerobuf-host") \
  timeout 540 python3 "$here/zerobuf_bench.py" --rank "$r" --nranks "$n" --lib "$lib" --max-bytes "$max" "${per_rank[@]}" \
    --min-bytes "${MIN_BYTES:-8}" --paths "${PATHS:-auto,ll,direct}" --large-heap "$heap" \
    "${sym[@]}" "${kernels[@]}" --out "$out/zerobuf_bench.json" ${EXTRA:-} >"$out/rank$r.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [[ -f "$out/zerobuf_bench.json" ]]; then
  python3 "$here/zerobuf_bench_table.py" "$out/zerobuf_bench.json" | tee "$out/table.txt"
fi
if (( rc != 0 )); then
  for (( r = 0; r < n; r++ )); do echo "== rank $r (tail)"; tail -n 25 "$out/rank$r.log"; done
fi
exit "$rc"
