#!/usr/bin/env bash
# Ground truth for the scheduler model (issue 14): a battery of 2-rank PyTorch workloads
# (scripts/gpu/nccl_sched_workloads.py), each recorded with the railcheck profiler plugin
# (libnccl-profiler-railcheck.so, JSON lines per rank) and NCCL's INIT,COLL,TUNING log.
# On one GPU both ranks share it, each with its own NCCL_HOSTID: NCCL sees two hosts and uses its
# network transport between them (Socket over lo), whether or not P2P/SHM are disabled.
#
# Inputs: RAILCHECK_PROFILER_SO (default build*/backends/hw/nccl_profiler/libnccl-profiler-railcheck.so),
#         OUT (default ./nccl-groundtruth-out), PARALLEL (workloads at once, default 4),
#         RUN_TIMEOUT (seconds per workload, default 150).
# Output: $OUT/<workload>/{env.txt,rank0.log,rank1.log,railcheck-prof-*.jsonl} and a summary.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$PWD/nccl-groundtruth-out}"
so="${RAILCHECK_PROFILER_SO:-$(ls -1 "$root"/build*/backends/hw/nccl_profiler/libnccl-profiler-railcheck.so 2>/dev/null | head -n1)}"
[[ -n "$so" && -f "$so" ]] || { echo "nccl_sched_groundtruth: profiler plugin not found" >&2; exit 2; }
so="$(cd "$(dirname "$so")" && pwd)/$(basename "$so")"
mkdir -p "$out"
forced=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1)
# name | workload | extra env
battery=(
  "singles|singles|${forced[*]}"
  "singles_notforced|singles|"
  "single_ops|single_ops|${forced[*]}"
  "batched_p2p|batched_p2p|${forced[*]}"
  "uneven_p2p|uneven_p2p|${forced[*]}"
  "coalesced_colls|coalesced_colls|${forced[*]}"
  "many_small|many_small|${forced[*]}"
  "mixed_group|mixed_group|${forced[*]}"
  "maxnch1|colls_and_p2p|${forced[*]} NCCL_MAX_NCHANNELS=1"
  "minnch4|colls_and_p2p|${forced[*]} NCCL_MIN_NCHANNELS=4"
  "nchpnp1|colls_and_p2p|${forced[*]} NCCL_NCHANNELS_PER_NET_PEER=1"
  "nchpnp4|colls_and_p2p|${forced[*]} NCCL_NCHANNELS_PER_NET_PEER=4"
  "proto_simple|singles|${forced[*]} NCCL_PROTO=Simple"
  "proto_ll|singles|${forced[*]} NCCL_PROTO=LL"
  "algo_tree|singles|${forced[*]} NCCL_ALGO=Tree"
)
run_one() {  # name workload env port
  local name="$1" wl="$2" extra="$3" port="$4" dir="$out/$1"
  mkdir -p "$dir"
  local common="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING NCCL_PROFILER_PLUGIN=$so RAILCHECK_PROFILER_DIR=$dir NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 $extra"
  { echo "# date $(date -u +%FT%TZ)"; echo "# gpu $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)";
    echo "# workload $wl"; echo "# env $common NCCL_HOSTID=railcheck-rank<R> (per rank)"; } >"$dir/env.txt"
  local pids=()
  for r in 0 1; do
    env $common NCCL_HOSTID="railcheck-rank$r" RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      timeout "${RUN_TIMEOUT:-150}" python3 "$here/nccl_sched_workloads.py" "$wl" >"$dir/rank$r.log" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  echo "$rc" >"$dir/rc"
  echo "$name rc=$rc prof_lines=$(cat "$dir"/railcheck-prof-*.jsonl 2>/dev/null | wc -l) coll_lines=$(grep -c 'opCount' "$dir/rank0.log")"
}
i=0
for entry in "${battery[@]}"; do
  IFS='|' read -r name wl extra <<<"$entry"
  run_one "$name" "$wl" "$extra" $((29600 + i)) &
  i=$((i + 1))
  while (( $(jobs -rp | wc -l) >= ${PARALLEL:-4} )); do sleep 0.5; done
done
wait
echo "nccl_sched_groundtruth: done; NCCL $(python3 -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))')"
