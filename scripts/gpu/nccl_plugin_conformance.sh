#!/usr/bin/env bash
# GPU conformance of the railcheck NCCL net plugin (issue 8 item 3), on one host with 2 GPUs, or
# with 1 GPU: both ranks on it, each with its own NCCL_HOSTID, so NCCL sees two hosts and every
# byte still crosses the network transport (nccl_ops_check.py --one-gpu).
#
# Three runs of scripts/gpu/nccl_ops_check.py (all_reduce, all_gather, reduce_scatter,
# send/recv; 8 B .. 256 MiB; every result checked), each with NCCL's network transport carrying
# all traffic (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0):
#   plugin    NCCL_NET_PLUGIN=railcheck                    our plugin, no fault
#   failover  the same with RAILCHECK_NCCL_FAULT set       every send comm cuts its primary rail
#   socket    NCCL_NET=Socket, no plugin                   NCCL's built-in Socket transport
# Then a table: correctness per op and size for all three, and busbw(plugin) / busbw(socket).
# Each run's NCCL INFO log must show what it claims to use, or the script stops with an error.
#
# Inputs (environment):
#   RAILCHECK_NCCL_PLUGIN_SO  the prebuilt libnccl-net-railcheck.so
#                             (default: build*/backends/hw/nccl/libnccl-net-railcheck.so)
#   RAILCHECK_HWLIBS          folder of the plugin's shared-library dependencies (libfabric and
#                             what it needs) carried from the build machine (default: .hwlibs)
#   RAILCHECK_NCCL_FAULT      the injected fault (default: cut-primary-after-msgs=N, N half the
#                             collectives one run issues at MAX_BYTES (nccl_ops_check.py
#                             --count-collectives); each collective puts at least one message on
#                             channel 0's send comm, so the fault is sure to fire mid-run)
#   OUT                       where the JSON, logs and table go (default: ./nccl-conformance-out)
#   MAX_BYTES                 largest size (default: 268435456; on one H100 the three runs then
#                             take about 1 minute in all, 2026-11-24, well inside the device
#                             tool's 10-minute command)
#   RUNS                      which runs, of "plugin failover socket" (default: all three). A table
#                             too large for one call is split: RUNS=plugin, then RUNS="failover
#                             socket" with the same OUT; the table covers every run's JSON in OUT.
#   RUN_TIMEOUT               seconds each run may take (default: 180 with 1 GPU, where a run took
#                             18 s; 900 with 2). A run past it fails the script with its log tail.
#   HA_NCCL_PROVIDER          libfabric provider under the plugin (default: shm, which joins the
#                             two ranks of this host; tcp;ofi_rxm works too)
#   RAILCHECK_SEGV_PRELOAD    LD_PRELOAD library that prints where a SIGSEGV happened (default:
#                             segv_report.c built into $OUT; libpsm, loaded by libfabric,
#                             otherwise swallows the backtrace)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$PWD/nccl-conformance-out}"
mkdir -p "$out"

die() { echo "nccl_plugin_conformance: $*" >&2; exit 1; }

source "$here/lib_nccl_plugin.sh"
nccl_plugin_find "$root" || exit 1
gpus="$(python3 -c 'import torch; print(torch.cuda.device_count())')" || die "needs PyTorch with CUDA"
one_gpu=()
case "$gpus" in
  0) die "no GPU visible to PyTorch" ;;
  1) one_gpu=(--one-gpu); echo "nccl_plugin_conformance: 1 GPU: both ranks on it, one NCCL_HOSTID each" >&2 ;;
esac
max_bytes="${MAX_BYTES:-268435456}"
run_timeout="${RUN_TIMEOUT:-900}"
[[ ${#one_gpu[@]} -gt 0 ]] && run_timeout="${RUN_TIMEOUT:-180}"
collectives="$(python3 "$here/nccl_ops_check.py" --count-collectives --max-bytes "$max_bytes")" ||
  die "cannot count the run's collectives"
fault="${RAILCHECK_NCCL_FAULT:-cut-primary-after-msgs=$((collectives / 2))}"
runs="${RUNS:-plugin failover socket}"
for r in $runs; do
  case "$r" in plugin|failover|socket) ;; *) die "RUNS: unknown run '$r' (plugin, failover, socket)" ;; esac
done
echo "nccl_plugin_conformance: runs '$runs', up to $max_bytes B, fault '$fault' (a run issues" \
  ">= $collectives collectives), $run_timeout s per run" >&2
# A crash must say where it happened: segv_report.so (built here when a C compiler exists).
segv="$(nccl_plugin_segv_preload "$out")"
preload=()
[[ -n "$segv" ]] && preload=(LD_PRELOAD="$segv")

common=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
        HA_NCCL_PROVIDER="${HA_NCCL_PROVIDER:-shm}" HA_NCCL_RAIL_ADDRS="${HA_NCCL_RAIL_ADDRS:-127.0.0.1}")

run() {  # label, extra env...
  local label="$1"; shift
  local start=$SECONDS
  echo "== $label" >&2
  if ! env "${common[@]}" "$@" timeout "$run_timeout" env "${preload[@]}" python3 "$here/nccl_ops_check.py" \
      --label "$label" --json "$out/$label.json" --max-bytes "$max_bytes" "${one_gpu[@]}" >"$out/$label.log" 2>&1; then
    tail -n 40 "$out/$label.log" >&2
    die "run '$label' failed after $((SECONDS - start)) s (full log: $out/$label.log)"
  fi
  echo "== $label: $((SECONDS - start)) s" >&2
}

expect_log() {  # label, kind of run (lib_nccl_plugin.sh's checks)
  local missing
  missing="$(nccl_plugin_check_log "$out/$1.log" "$2")" || die "run '$1': ${missing%%$'\n'*} (see $out/$1.log)"
}

wants() { [[ " $runs " == *" $1 "* ]]; }
if wants plugin; then
  run plugin NCCL_NET_PLUGIN=railcheck
  expect_log plugin plugin
fi
if wants failover; then
  run failover NCCL_NET_PLUGIN=railcheck RAILCHECK_NCCL_FAULT="$fault"
  expect_log failover failover
  echo "$fault" >"$out/fault.txt"
  nccl_plugin_failovers_done "$out/failover.log" >"$out/failover.count"
fi
if wants socket; then
  run socket NCCL_NET=Socket
  expect_log socket socket
fi

python3 "$here/nccl_conformance_table.py" "$out" | tee "$out/table.txt"
echo "nccl_plugin_conformance: all results correct; JSON in $out" >&2
