#!/usr/bin/env bash
# Issue 32 on a quiet machine (a GPU host's CPUs): bench/fabric_write_imm of two builds side by
# side, interleaved, and nccl-tests sendrecv over the plugin of each build against NCCL's Socket
# (one process driving every GPU, 8 B..64 MiB), with a per-size time table (nccl-tests prints busbw
# to 0.01 GB/s, 0.00 below ~16 KiB, so sizes are compared by time).
#
# Inputs: BEFORE, AFTER   folders each holding fabric_write_imm and libnccl-net-railcheck.so
#         LIBS            folder(s) for LD_LIBRARY_PATH (SimGrid, libfabric and their dependencies)
#         NCCL_TESTS_DIR  nccl-tests checkout; WI_RUNS (default "1 2 3"); REPEAT (nccl-tests runs, 3)
# Output: $OUT/wi_<before|after>_<i>.txt and the tables on stdout.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/small-message-perf}"
mkdir -p "$out"
export LD_LIBRARY_PATH="${LIBS:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for i in ${WI_RUNS:-1 2 3}; do
  for v in before after; do
    dir=$BEFORE; [[ $v == after ]] && dir=$AFTER
    timeout 120 "$dir/fabric_write_imm" >"$out/wi_${v}_$i.txt" 2>&1
    echo "== fabric_write_imm $v run $i (rc $?)"; grep '^| shm\|^| tcp' "$out/wi_${v}_$i.txt"
  done
done
export NCCL_NVLS_ENABLE=0
base=(NCCL_TESTS_DIR="$NCCL_TESTS_DIR" RAILCHECK_HWLIBS="${LIBS:-}" RUN_TIMEOUT=120 BUILD_DIR=/tmp/nt-build
  OPS=sendrecv MODES=one-process REPEAT="${REPEAT:-3}")
env "${base[@]}" RAILCHECK_NCCL_PLUGIN_SO="$AFTER/libnccl-net-railcheck.so" CONFIGS="plugin-shm socket" \
  OUT="$out/nt-after" "$here/nccl_tests_suite.sh" >"$out/nt-after.log" 2>&1
env "${base[@]}" RAILCHECK_NCCL_PLUGIN_SO="$BEFORE/libnccl-net-railcheck.so" CONFIGS="plugin-shm" \
  OUT="$out/nt-before" "$here/nccl_tests_suite.sh" >"$out/nt-before.log" 2>&1
tail -n 4 "$out/nt-after.log" "$out/nt-before.log"
python3 - "$out" <<'PY'
import collections, json, sys
t = collections.defaultdict(lambda: collections.defaultdict(list))
for tag in ("after", "before"):
    try:
        runs = json.load(open(f"{sys.argv[1]}/nt-{tag}/nccl_tests.json"))["runs"]
    except (OSError, ValueError, KeyError) as e:
        print(f"no nccl-tests results for {tag}: {e}"); continue
    for r in runs:
        cfg = r["config"] if r["config"] == "socket" else f"plugin-{tag}"
        for row in r.get("rows") or []:
            if row.get("time_us_oop") is not None:
                t[row["bytes"]][cfg].append(row["time_us_oop"])
print("| bytes | Socket us | plugin before us | plugin after us | Socket/after | Socket/before |")
print("|---:|---:|---:|---:|---:|---:|")
for b in sorted(t):
    m = {k: min(v) for k, v in t[b].items() if v}
    s, a, bf = m.get("socket"), m.get("plugin-after"), m.get("plugin-before")
    f = lambda x: "-" if x is None else f"{x:.1f}"
    q = lambda x: "-" if x is None or s is None else f"{s / x:.2f}"
    print(f"| {b} | {f(s)} | {f(bf)} | {f(a)} | {q(a)} | {q(bf)} |")
PY
