#!/usr/bin/env bash
# Issue 42 on a GPU host: the plugin on tcp;ofi_rxm against NCCL's Socket transport on the same
# loopback TCP, like for like, and against an earlier build of the plugin, in one sitting:
#   1. the CPU harness (bench/nccl_plugin_overhead: a 64 B / 4 KiB message through the plugin vs
#      the bare connection), each build's own bench, alternated CPU_RUNS times;
#   2. nccl-tests (scripts/gpu/nccl_tests_suite.sh, one process driving every GPU) with the new
#      plugin on tcp, the same with an injected failover, Socket, then the earlier build on tcp;
#   3. scripts/gpu/plugin_tcp_table.py: medians per op and size, JSON rows {test, bytes,
#      plugin_us, socket_us, fault_us, correct, plugin_before_us} and a markdown table.
#
# Inputs: AFTER, BEFORE  folders each holding libnccl-net-railcheck.so and nccl_plugin_overhead
#                        (BEFORE optional: without it, no before columns)
#         LIBS           the plugin's shared-library dependencies (RAILCHECK_HWLIBS)
#         NCCL_TESTS_DIR nccl-tests checkout; OPS [sendrecv alltoall all_reduce]; REPEAT [3]
#         CPU_RUNS [2], CPU_REPEAT [5]; RUN_TIMEOUT seconds per nccl-tests run [120]
#         DEADLINE: seconds after this script's start past which no nccl-tests run starts (those
#         left are not-run) [none]
# Output: $OUT/cpu_<after|before>_<i>.txt, $OUT/nt-after/, $OUT/nt-before/, $OUT/plugin_tcp.json,
#         the tables on stdout.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/plugin-tcp-perf}"
mkdir -p "$out"
[[ -n "${AFTER:-}" && -f "$AFTER/libnccl-net-railcheck.so" ]] || { echo "plugin_tcp_perf: set AFTER" >&2; exit 2; }
builds=(after); [[ -n "${BEFORE:-}" ]] && builds+=(before)
export LD_LIBRARY_PATH="${LIBS:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for i in $(seq "${CPU_RUNS:-2}"); do
  for v in "${builds[@]}"; do
    dir=$AFTER; [[ $v == before ]] && dir=$BEFORE
    timeout 120 "$dir/nccl_plugin_overhead" --repeat "${CPU_REPEAT:-5}" --size 64 --size 4096 \
      --plugin "$dir/libnccl-net-railcheck.so" >"$out/cpu_${v}_$i.txt" 2>&1
    echo "== nccl_plugin_overhead $v run $i (rc $?)"; grep '^nccl_plugin\|^| tcp' "$out/cpu_${v}_$i.txt"
  done
done
export NCCL_NVLS_ENABLE=0
base=(NCCL_TESTS_DIR="$NCCL_TESTS_DIR" RAILCHECK_HWLIBS="${LIBS:-}" RUN_TIMEOUT="${RUN_TIMEOUT:-120}" BUILD_DIR=/tmp/nt-build
  OPS="${OPS:-sendrecv alltoall all_reduce}" MODES=one-process REPEAT="${REPEAT:-3}")
left() {  # SUITE_DEADLINE for a suite starting now (at least 1: the suite refuses 0)
  [[ -n "${DEADLINE:-}" ]] && echo "SUITE_DEADLINE=$((DEADLINE - SECONDS > 1 ? DEADLINE - SECONDS : 1))" || echo "SUITE_DEADLINE="
}
env "${base[@]}" "$(left)" RAILCHECK_NCCL_PLUGIN_SO="$AFTER/libnccl-net-railcheck.so" CONFIGS="plugin-tcp socket fault-tcp" \
  OUT="$out/nt-after" "$here/nccl_tests_suite.sh" >"$out/nt-after.log" 2>&1
before_json=()
if [[ -n "${BEFORE:-}" ]]; then
  env "${base[@]}" "$(left)" RAILCHECK_NCCL_PLUGIN_SO="$BEFORE/libnccl-net-railcheck.so" CONFIGS="plugin-tcp" \
    OUT="$out/nt-before" "$here/nccl_tests_suite.sh" >"$out/nt-before.log" 2>&1
  before_json=(--before "$out/nt-before/nccl_tests.json")
fi
tail -n 3 "$out"/nt-*.log
[[ -f "$out/nt-after/nccl_tests.json" ]] || { echo "plugin_tcp_perf: no nccl-tests results (nt-after.log says why)" >&2; exit 1; }
cat "$out/nt-after/table.txt"
python3 "$here/plugin_tcp_table.py" --json "$out/plugin_tcp.json" "${before_json[@]}" "$out/nt-after/nccl_tests.json"
