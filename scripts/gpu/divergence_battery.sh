#!/usr/bin/env bash
# The true-positive battery of issue 40: jobs where one rank (or one host) runs with another NCCL
# setting, jobs whose ranks issue different collectives, and healthy controls, each recorded as its
# operator would have it: every rank's NCCL log (NCCL_DEBUG_SUBSYS=INIT,ENV,COLL,TUNING), its
# environment, and what NCCL really did (completed, hung at which operation, wrong values).
#
# Ranks: rNN cases run one rank per GPU on one host (NVLink between them); hHxP cases give each
# group of P ranks its own NCCL_HOSTID, so NCCL uses NVLink inside a "host" and its network
# transport (Socket over lo) between hosts. Rank r drives GPU r mod <GPUs>.
#
# Inputs: OUT (default ./divergence-out), TIMEOUT_S (process-group timeout, default 15),
#         KILL_S (hard kill per case, default 75), PARALLEL (cases at once, default 4),
#         ONLY (space-separated case names, default all).
# Output: $OUT/<case>/{rank<r>.log, progress_<r>.txt, proc_<r>.log, env.txt, outcome.txt} and
#         $OUT/battery.tar.gz holding all of it (what comes back from the device machine).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/divergence-out}"
timeout_s="${TIMEOUT_S:-15}"
kill_s="${KILL_S:-75}"
parallel="${PARALLEL:-4}"
mkdir -p "$out"
# shellcheck source=scripts/gpu/lib_torch_gpus.sh
source "$here/lib_torch_gpus.sh"
require_torch_gpus divergence_battery 2

# name | ranks | ranks per NCCL_HOSTID host | workload | per-rank settings ("R:VAR=VAL,VAR=VAL;R:...",
# "*" = every rank, "-" = none)
cases="
r2_healthy|2|2|sweep|-
r2_all_proto_ll|2|2|sweep|*:NCCL_PROTO=LL
r2_proto_ll|2|2|sweep|1:NCCL_PROTO=LL
r2_proto_simple|2|2|sweep|1:NCCL_PROTO=Simple
r2_algo_tree|2|2|sweep|1:NCCL_ALGO=Tree
r2_nthreads128|2|2|sweep|1:NCCL_NTHREADS=128
r2_buffsize1m|2|2|sweep|1:NCCL_BUFFSIZE=1048576
r2_maxnch4|2|2|sweep|1:NCCL_MAX_NCHANNELS=4
r2_maxnch24|2|2|sweep|1:NCCL_MAX_NCHANNELS=24
r2_nvl_chunk128k|2|2|sweep|1:NCCL_P2P_NVL_CHUNKSIZE=131072
r2_skip|2|2|skip|-
r2_count|2|2|count|-
n2_proto_ll|2|1|sweep|1:NCCL_PROTO=LL
n2_buffsize1m|2|1|sweep|1:NCCL_BUFFSIZE=1048576
h2x2_healthy|4|2|sweep|-
h2x2_proto_ll|4|2|sweep|3:NCCL_PROTO=LL
h2x2_maxnch2_host1|4|2|sweep|2:NCCL_MAX_NCHANNELS=2;3:NCCL_MAX_NCHANNELS=2
h2x2_nthreads256|4|2|sweep|3:NCCL_NTHREADS=256
h2x2_all_algo_tree|4|2|sweep|*:NCCL_ALGO=Tree
r4_maxnch8|4|4|sweep|2:NCCL_MAX_NCHANNELS=8
r2_all_nthreads128|2|2|sweep|*:NCCL_NTHREADS=128
r4_all_mix|4|4|sweep|*:NCCL_MAX_NCHANNELS=6,NCCL_PROTO=^LL128,NCCL_NTHREADS=256
h2x2_all_nthreads256|4|2|sweep|*:NCCL_NTHREADS=256
r2_llbuff256k|2|2|sweep|1:NCCL_LL_BUFFSIZE=262144
n2_net_chunk64k|2|1|sweep|1:NCCL_P2P_NET_CHUNKSIZE=65536
h2x2_all_ring|4|2|sweep|*:NCCL_ALGO=Ring
"
if [[ -n "${ONLY:-}" ]]; then
  picked=""
  for n in $ONLY; do picked+="$(grep "^$n|" <<<"$cases")"$'\n'; done
  cases="$picked"
fi

settings_of() {  # spec rank -> "VAR=VAL VAR=VAL" for that rank
  local spec=$1 r=$2 part who vars
  [[ "$spec" == "-" ]] && return
  IFS=';' read -ra parts <<<"$spec"
  for part in "${parts[@]}"; do
    who="${part%%:*}"; vars="${part#*:}"
    if [[ "$who" == "*" || "$who" == "$r" ]]; then echo -n "${vars//,/ } "; fi
  done
}

run_case() {  # name ranks per_host workload spec port
  local name=$1 ranks=$2 per_host=$3 wl=$4 spec=$5 port=$6 dir="$out/$1" r
  rm -rf "$dir" && mkdir -p "$dir"
  local common="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,COLL,TUNING NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1
    NCCL_NVLS_ENABLE=0 TORCH_NCCL_ENABLE_MONITORING=1 TORCH_NCCL_DUMP_ON_TIMEOUT=0"
  {
    echo "# case $name: $ranks ranks, $per_host per NCCL_HOSTID host, workload $wl, process-group timeout ${timeout_s}s"
    echo "# env $common" | tr -s ' \n' ' '; echo
    for ((r = 0; r < ranks; r++)); do
      local own; own="$(settings_of "$spec" "$r")"
      echo "# rank $r env NCCL_HOSTID=railcheck-host$((r / per_host)) ${own}" | sed 's/ *$//'
    done
  } >"$dir/env.txt"
  local pids=()
  for ((r = 0; r < ranks; r++)); do
    # shellcheck disable=SC2046,SC2086  # word splitting of the assignments is the point
    env $common $(settings_of "$spec" "$r") NCCL_HOSTID="railcheck-host$((r / per_host))" \
      NCCL_DEBUG_FILE="$dir/rank$r.log" MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      timeout -s KILL "$kill_s" python3 "$here/divergence_rank.py" --rank "$r" --world "$ranks" \
      --workload "$wl" --out "$dir" --timeout-s "$timeout_s" >"$dir/proc_$r.log" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < ranks; r++)); do
    wait "${pids[$r]}"
    echo $? >"$dir/rc_$r"
  done
  python3 - "$dir" "$ranks" <<'EOF' >"$dir/outcome.txt"
import sys, os
d, n = sys.argv[1], int(sys.argv[2])
hung, wrong, done, failed = [], [], [], []
for r in range(n):
    rc = open(os.path.join(d, f"rc_{r}")).read().strip()
    lines = open(os.path.join(d, f"progress_{r}.txt")).read().split("\n") if os.path.exists(os.path.join(d, f"progress_{r}.txt")) else []
    lines = [l for l in lines if l]
    last = lines[-1] if lines else "(no progress)"
    print(f"rank {r}: exit {rc}; last: {last}")
    for l in lines:
        if " WRONG " in l:
            wrong.append((r, l))
    if last == "completed":
        done.append(r)
    elif last.startswith("start ") and rc == "1":
        failed.append((r, last[len("start "):]))  # NCCL returned an error to the caller (a Python exception)
    elif last.startswith("start "):
        hung.append((r, last[len("start "):]))
if len(done) == n and not wrong:
    print("outcome: completed, every value right")
else:
    if wrong:
        print("outcome: wrong values: " + "; ".join(f"rank {r} {l}" for r, l in wrong[:4]))
    if failed:
        print("outcome: failed (NCCL error): " + "; ".join(f"rank {r} at op {w}" for r, w in failed))
    if hung:
        print("outcome: hung: " + "; ".join(f"rank {r} at op {w}" for r, w in hung))
    elif len(done) == n:
        print("outcome: completed (with the wrong values above)")
EOF
  rm -f "$dir"/rc_*
  echo "divergence_battery: $name: $(grep '^outcome' "$dir/outcome.txt" | tr '\n' ' ')"
}

port=29700
running=0
while IFS='|' read -r name ranks per_host wl spec; do
  [[ -z "$name" ]] && continue
  run_case "$name" "$ranks" "$per_host" "$wl" "$spec" "$port" &
  port=$((port + 10))
  running=$((running + 1))
  if (( running >= parallel )); then wait -n; running=$((running - 1)); fi
done <<<"$cases"
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpus.txt"
python3 -c 'import torch; print("torch", torch.__version__, "nccl", ".".join(map(str, torch.cuda.nccl.version())))' >>"$out/gpus.txt"
date -u +%Y-%m-%dT%H:%MZ >>"$out/gpus.txt"
tar czf "$out.tar.gz" -C "$out" . && mv "$out.tar.gz" "$out/battery.tar.gz"
