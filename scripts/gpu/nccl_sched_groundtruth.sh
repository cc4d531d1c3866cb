#!/usr/bin/env bash
# Ground truth for the scheduler model (issues 14 and 27): batteries of PyTorch workloads
# (scripts/gpu/nccl_sched_workloads.py), each recorded with the railcheck profiler plugin
# (libnccl-profiler-railcheck.so, JSON lines per rank) and NCCL's INIT,COLL,TUNING log.
#
# A workload runs R ranks as H "hosts" of G ranks each (R = H x G): every host gets its own
# NCCL_HOSTID, and rank r drives GPU (r mod G) mod <GPUs on the machine>. NCCL uses NVLink (P2P)
# between the ranks of one host when they sit on different GPUs, and its network transport (Socket
# over lo) between hosts; with one GPU every rank shares it (G = 1: every rank its own host).
#
# BATTERY=v1 (default): the 15 two-rank, two-host workloads of issue 14 (one GPU is enough).
# BATTERY=nvlink: issue 27's battery for a machine with 2 GPUs joined by NVLink: one host of 2
#   (NVLink, 24+ channels), forced network within a host, 2x2 and 4x2 "clusters" (NVLink inside a
#   host, network between), 4 hosts of 1 (network only: PAT), and each protocol and algorithm forced.
#
# Inputs: RAILCHECK_PROFILER_SO (default build*/backends/hw/nccl_profiler/libnccl-profiler-railcheck.so),
#         OUT (default ./nccl-groundtruth-out), PARALLEL (workloads at once, default 4),
#         RUN_TIMEOUT (seconds per workload, default 150), ONLY (space-separated names to run),
#         SUBSYS (NCCL_DEBUG_SUBSYS, default INIT,COLL,TUNING; add GRAPH for the graph search results).
# Output: $OUT/<workload>/{env.txt,rank<R>.log,railcheck-prof-*.jsonl,rc} and a summary line each.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$PWD/nccl-groundtruth-out}"
so="${RAILCHECK_PROFILER_SO:-$(ls -1 "$root"/build*/backends/hw/nccl_profiler/libnccl-profiler-railcheck.so 2>/dev/null | head -n1)}"
[[ -n "$so" && -f "$so" ]] || { echo "nccl_sched_groundtruth: profiler plugin not found" >&2; exit 2; }
so="$(cd "$(dirname "$so")" && pwd)/$(basename "$so")"
mkdir -p "$out"
ngpus="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)"
(( ngpus >= 1 )) || { echo "nccl_sched_groundtruth: no GPU (nvidia-smi lists none)" >&2; exit 2; }
forced=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1)
# name | workload | ranks | ranks per host | extra env
case "${BATTERY:-v1}" in
  v1)
    battery=(
      "singles|singles|2|1|${forced[*]}"
      "singles_notforced|singles|2|1|"
      "single_ops|single_ops|2|1|${forced[*]}"
      "batched_p2p|batched_p2p|2|1|${forced[*]}"
      "uneven_p2p|uneven_p2p|2|1|${forced[*]}"
      "coalesced_colls|coalesced_colls|2|1|${forced[*]}"
      "many_small|many_small|2|1|${forced[*]}"
      "mixed_group|mixed_group|2|1|${forced[*]}"
      "maxnch1|colls_and_p2p|2|1|${forced[*]} NCCL_MAX_NCHANNELS=1"
      "minnch4|colls_and_p2p|2|1|${forced[*]} NCCL_MIN_NCHANNELS=4"
      "nchpnp1|colls_and_p2p|2|1|${forced[*]} NCCL_NCHANNELS_PER_NET_PEER=1"
      "nchpnp4|colls_and_p2p|2|1|${forced[*]} NCCL_NCHANNELS_PER_NET_PEER=4"
      "proto_simple|singles|2|1|${forced[*]} NCCL_PROTO=Simple"
      "proto_ll|singles|2|1|${forced[*]} NCCL_PROTO=LL"
      "algo_tree|singles|2|1|${forced[*]} NCCL_ALGO=Tree"
    ) ;;
  nvlink)
    (( ngpus >= 2 )) || { echo "nccl_sched_groundtruth: BATTERY=nvlink needs 2 GPUs, found $ngpus" >&2; exit 2; }
    battery=(
      "nvl2_sweep|sweep_and_p2p|2|2|"
      "nvl2_ll|sweep|2|2|NCCL_PROTO=LL"
      "nvl2_ll128|sweep|2|2|NCCL_PROTO=LL128"
      "nvl2_simple|sweep|2|2|NCCL_PROTO=Simple"
      "nvl2_tree|sweep:all_reduce|2|2|NCCL_ALGO=Tree"
      "nvl2_maxnch4|sweep|2|2|NCCL_MAX_NCHANNELS=4"
      "net1h2_sweep|sweep_and_p2p|2|2|${forced[*]}"
      "net2h1_sweep|sweep_and_p2p|2|1|${forced[*]}"
      "c2x2_sweep|sweep_and_p2p|4|2|"
      "c2x2_ring|sweep|4|2|NCCL_ALGO=Ring"
      "c2x2_tree|sweep:all_reduce|4|2|NCCL_ALGO=Tree"
      "c4x2_sweep|sweep_and_p2p|8|2|"
      "h4x1_sweep|sweep_and_p2p|4|1|"
      "h4x1_pat|sweep:all_gather,reduce_scatter|4|1|NCCL_ALGO=PAT"
      "h4x1_ll128|sweep|4|1|NCCL_PROTO=LL128"
    ) ;;
  *) echo "nccl_sched_groundtruth: BATTERY must be v1 or nvlink" >&2; exit 2 ;;
esac
run_one() {  # name workload ranks ranks-per-host env port
  local name="$1" wl="$2" ranks="$3" per_host="$4" extra="$5" port="$6" dir="$out/$1"
  mkdir -p "$dir"
  local common="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=${SUBSYS:-INIT,COLL,TUNING} NCCL_PROFILER_PLUGIN=$so RAILCHECK_PROFILER_DIR=$dir NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 $extra"
  { echo "# date $(date -u +%FT%TZ)"; echo "# gpu $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $ngpus";
    echo "# workload $wl"; echo "# ranks $ranks as $((ranks / per_host)) hosts of $per_host, rank r on GPU (r mod $per_host) mod $ngpus";
    echo "# env $common NCCL_HOSTID=railcheck-host<r / $per_host> (per rank)"; } >"$dir/env.txt"
  local pids=()
  for ((r = 0; r < ranks; r++)); do
    env $common NCCL_HOSTID="railcheck-host$((r / per_host))" RANK=$r WORLD_SIZE="$ranks" \
      LOCAL_GPU=$(((r % per_host) % ngpus)) MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
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
  IFS='|' read -r name wl ranks per_host extra <<<"$entry"
  if [[ -n "${ONLY:-}" && " $ONLY " != *" $name "* ]]; then continue; fi
  run_one "$name" "$wl" "$ranks" "$per_host" "$extra" $((29600 + i)) &
  i=$((i + 1))
  while (( $(jobs -rp | wc -l) >= ${PARALLEL:-4} )); do sleep 0.5; done
done
wait
echo "nccl_sched_groundtruth: done; NCCL $(python3 -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))')"
