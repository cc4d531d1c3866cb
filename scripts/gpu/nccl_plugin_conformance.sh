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
#   RAILCHECK_NCCL_FAULT      the injected fault (default: cut-primary-after-msgs=2000)
#   OUT                       where the JSON, logs and table go (default: ./nccl-conformance-out)
#   MAX_BYTES                 largest size (default: 268435456)
#   RUN_TIMEOUT               seconds each of the three runs may take (default: 900)
#   HA_NCCL_PROVIDER          libfabric provider under the plugin (default: shm, which joins the
#                             two ranks of this host; tcp;ofi_rxm works too)
#   RAILCHECK_SEGV_PRELOAD    LD_PRELOAD library that prints where a SIGSEGV happened (default:
#                             segv_report.c built into $OUT; libpsm, loaded by libfabric,
#                             otherwise swallows the backtrace)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$PWD/nccl-conformance-out}"
max_bytes="${MAX_BYTES:-268435456}"
fault="${RAILCHECK_NCCL_FAULT:-cut-primary-after-msgs=2000}"
mkdir -p "$out"

die() { echo "nccl_plugin_conformance: $*" >&2; exit 1; }

so="${RAILCHECK_NCCL_PLUGIN_SO:-}"
if [[ -z "$so" ]]; then
  so="$(ls -1 "$root"/build*/backends/hw/nccl/libnccl-net-railcheck.so 2>/dev/null | head -n1 || true)"
fi
[[ -n "$so" && -f "$so" ]] || die "plugin not found; set RAILCHECK_NCCL_PLUGIN_SO to libnccl-net-railcheck.so"
plugin_dir="$(cd "$(dirname "$so")" && pwd)"
hwlibs="${RAILCHECK_HWLIBS:-$root/.hwlibs}"
export LD_LIBRARY_PATH="$plugin_dir${hwlibs:+:$hwlibs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Every shared library the plugin needs must resolve, or NCCL silently falls back to Socket.
missing="$(ldd "$so" | awk '/not found/ {print $1}')"
[[ -z "$missing" ]] || die "the plugin's dependencies are not found: $missing (put them in $hwlibs)"
gpus="$(python3 -c 'import torch; print(torch.cuda.device_count())')" || die "needs PyTorch with CUDA"
one_gpu=()
case "$gpus" in
  0) die "no GPU visible to PyTorch" ;;
  1) one_gpu=(--one-gpu); echo "nccl_plugin_conformance: 1 GPU: both ranks on it, one NCCL_HOSTID each" >&2 ;;
esac
# A crash must say where it happened: segv_report.so (built here when a C compiler exists).
segv="${RAILCHECK_SEGV_PRELOAD:-}"
if [[ -z "$segv" ]] && command -v cc >/dev/null; then
  cc -shared -fPIC -O1 -o "$out/segv_report.so" "$here/segv_report.c" -ldl && segv="$out/segv_report.so"
fi
preload=()
[[ -n "$segv" ]] && preload=(LD_PRELOAD="$segv")

common=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
        HA_NCCL_PROVIDER="${HA_NCCL_PROVIDER:-shm}" HA_NCCL_RAIL_ADDRS="${HA_NCCL_RAIL_ADDRS:-127.0.0.1}")

run() {  # label, extra env...
  local label="$1"; shift
  echo "== $label" >&2
  if ! env "${common[@]}" "${preload[@]}" "$@" timeout "${RUN_TIMEOUT:-900}" python3 "$here/nccl_ops_check.py" \
      --label "$label" --json "$out/$label.json" --max-bytes "$max_bytes" "${one_gpu[@]}" >"$out/$label.log" 2>&1; then
    tail -n 40 "$out/$label.log" >&2
    die "run '$label' failed (full log: $out/$label.log)"
  fi
}

expect_log() {  # label, pattern, what it proves
  grep -q -E "$2" "$out/$1.log" || die "run '$1': NCCL's log does not show $3 (no line matching '$2'; see $out/$1.log)"
}

run plugin NCCL_NET_PLUGIN=railcheck
expect_log plugin "NET/Plugin: Loaded net plugin railcheck" "our plugin loaded"
expect_log plugin "Using network railcheck" "our plugin in use"
expect_log plugin "NET/railcheck railcheck0" "the plugin's device properties"

run failover NCCL_NET_PLUGIN=railcheck RAILCHECK_NCCL_FAULT="$fault"
expect_log failover "Using network railcheck" "our plugin in use"
expect_log failover "fault injected" "the injected fault"
expect_log failover "failover [0-9]+ done" "a completed failover"

run socket NCCL_NET=Socket
expect_log socket "Using network Socket" "NCCL's Socket transport"

python3 - "$out" <<'EOF'
import json, sys
out = sys.argv[1]
runs = {name: json.load(open(f"{out}/{name}.json")) for name in ("plugin", "failover", "socket")}
key = lambda r: (r["op"], r["bytes"])
rows = {name: {key(r): r for r in run["rows"]} for name, run in runs.items()}
table = []
print(f"GPU {runs['plugin']['gpu']} x{runs['plugin']['world']}, NCCL {runs['plugin']['nccl']}, torch {runs['plugin']['torch']}")
print(f"{'op':>14} {'bytes':>10}  plugin failover socket  busbw plugin  busbw socket  ratio")
for k in sorted(rows["plugin"], key=lambda k: (k[0], k[1])):
    p, f, s = rows["plugin"][k], rows["failover"].get(k), rows["socket"].get(k)
    ratio = p["busbw_gbs"] / s["busbw_gbs"] if s and s["busbw_gbs"] > 0 else None
    ok = lambda r: "ok" if r and r["correct"] else "BAD"
    print(f"{k[0]:>14} {k[1]:>10}  {ok(p):>6} {ok(f):>8} {ok(s):>6}  {p['busbw_gbs']:9.3f} GB/s "
          f"{s['busbw_gbs'] if s else float('nan'):9.3f} GB/s  {ratio if ratio else float('nan'):5.2f}")
    table.append({"op": k[0], "bytes": k[1], "plugin_ok": p["correct"], "failover_ok": bool(f and f["correct"]),
                  "socket_ok": bool(s and s["correct"]), "busbw_plugin_gbs": p["busbw_gbs"],
                  "busbw_socket_gbs": s["busbw_gbs"] if s else None, "ratio": ratio})
json.dump({"gpu": runs["plugin"]["gpu"], "nccl": runs["plugin"]["nccl"], "torch": runs["plugin"]["torch"],
           "table": table}, open(f"{out}/summary.json", "w"), indent=1)
bad = [t for t in table if not (t["plugin_ok"] and t["failover_ok"] and t["socket_ok"])]
sys.exit(1 if bad else 0)
EOF
echo "nccl_plugin_conformance: all results correct; JSON in $out" >&2
