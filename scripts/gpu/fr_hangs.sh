#!/usr/bin/env bash
# Real hangs under NCCL, recorded as their operators would have them (issue 31): each case of
# scripts/gpu/fr_hang_cases.py runs on R ranks with PyTorch's Flight Recorder on and a short
# process-group timeout, so the watchdog dumps every live rank's buffer; NCCL's INFO log is kept
# per rank; PyTorch's own analyzer (torch.distributed.flight_recorder.fr_trace) is run on the same
# dumps for the side-by-side in docs/triage.md.
#
# Ranks: 2 (one per GPU), and 4 as 2 "hosts" of 2 (NCCL_HOSTID), so NCCL uses NVLink inside a host
# and its network transport (Socket over lo) between hosts. Rank r drives GPU r mod <GPUs>.
#
# Inputs: OUT (default ./fr-hangs-out), TIMEOUT_S (the process group's timeout, default 10),
#         ONLY (space-separated "case:ranks" to run, default all), PARALLEL (cases at once, default 4),
#         FR_TRACE_ONLY (a folder of recordings, e.g. scenarios/triage: rerun PyTorch's analyzer on
#         each and nothing else).
# Output: $OUT/<case>-r<R>/{rank_<r> (dumps), json/rank_<r>.json (the JSON form, runs that completed), nccl_rank<r>.log, outcome_<r>.txt,
#         proc_<r>.log, rc_<r>, env.txt, fr_trace.txt}; fr_trace_help.txt and torch_fr_src.tar.gz.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/fr-hangs-out}"
timeout_s="${TIMEOUT_S:-10}"
parallel="${PARALLEL:-4}"
mkdir -p "$out"
# shellcheck source=scripts/gpu/lib_torch_gpus.sh
source "$here/lib_torch_gpus.sh"
require_torch_gpus fr_hangs 1

all_cases="healthy:2 healthy_uneven:2 skip_allreduce:2 skip_in_loop:2 op_mismatch:2 size_mismatch:2
batch_missing_send:2 p2p_cycle:2 rank_dies:2 healthy:4 healthy_groups:4 skip_allreduce:4 p2p_cycle:4 rank_dies:4"
cases="${ONLY:-$all_cases}"

# PyTorch's analyzer on a case's dumps, into <dir>/fr_trace.txt. It reads every file under the
# folder it is given (json/ too), so it gets a copy holding the dumps alone; it needs every rank's
# dump unless told otherwise.
fr_trace_on() {  # dir
  local dir=$1 only
  only="$(mktemp -d)"
  cp "$dir"/rank_* "$only"/ 2>/dev/null
  python3 -m torch.distributed.flight_recorder.fr_trace "$only" --prefix rank_ --allow-incomplete-ranks \
    >"$dir/fr_trace.txt" 2>&1 || echo "(fr_trace exit $?)" >>"$dir/fr_trace.txt"
  rm -rf "$only"
}

run_case() {  # case ranks port
  local name=$1 ranks=$2 port=$3 dir="$out/$1-r$2" per_host=2 r
  rm -rf "$dir" && mkdir -p "$dir"
  local common="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING,ENV NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1
    NCCL_NVLS_ENABLE=0 TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_TRACE_BUFFER_SIZE=2000
    TORCH_FR_DUMP_TEMP_FILE=$dir/rank_ TORCH_NCCL_DEBUG_INFO_TEMP_FILE=$dir/rank_ TORCH_NCCL_DUMP_ON_TIMEOUT=1
    TORCH_NCCL_ENABLE_MONITORING=1 TORCH_NCCL_TRACE_CPP_STACK=0"
  { echo "# case $name, $ranks ranks, $per_host per NCCL_HOSTID host, process-group timeout ${timeout_s}s"
    echo "# env $common" | tr -s ' \n' ' '; echo; } >"$dir/env.txt"
  local pids=()
  for ((r = 0; r < ranks; r++)); do
    # shellcheck disable=SC2086  # $common is a list of assignments
    env $common NCCL_HOSTID="railcheck-host$((r / per_host))" MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      timeout -s KILL 150 python3 "$here/fr_hang_cases.py" --case "$name" --rank "$r" --world "$ranks" \
      --out "$dir" --timeout-s "$timeout_s" >"$dir/proc_$r.log" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < ranks; r++)); do
    wait "${pids[$r]}"
    echo $? >"$dir/rc_$r"
  done
  fr_trace_on "$dir"
  echo "fr_hangs: $name on $ranks ranks: rc $(cat "$dir"/rc_* | tr '\n' ' ')dumps $(ls "$dir" | grep -c '^rank_')"
}

python3 -m torch.distributed.flight_recorder.fr_trace --help >"$out/fr_trace_help.txt" 2>&1
if [[ -n "${FR_TRACE_ONLY:-}" ]]; then  # FR_TRACE_ONLY=<folder of recordings>: rerun the analyzer alone
  for d in "$FR_TRACE_ONLY"/*/; do fr_trace_on "${d%/}"; done
  exit 0
fi
torch_dir="$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')"
tar czf "$out/torch_fr_src.tar.gz" -C "$torch_dir" distributed/flight_recorder \
  $(cd "$torch_dir" && ls include/torch/csrc/distributed/c10d/FlightRecorder*.hpp 2>/dev/null) 2>/dev/null
port=29600
running=0
while read -r spec; do
  [[ -z "$spec" ]] && continue
  run_case "${spec%%:*}" "${spec##*:}" "$port" &
  port=$((port + 10))
  running=$((running + 1))
  if ((running >= parallel)); then wait -n; running=$((running - 1)); fi
done < <(tr ' ' '\n' <<<"$cases")
wait
echo "fr_hangs: done; torch $(python3 -c 'import torch; print(torch.__version__)'), NCCL $(python3 -c 'import torch; print(".".join(map(str, torch.cuda.nccl.version())))')"
