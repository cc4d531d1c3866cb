#!/usr/bin/env bash
# Issue 42 on a GPU host: the plugin on TCP (its default provider; TCP_PROVIDER chooses) against
# NCCL's Socket transport on the same loopback TCP, like for like, in one sitting:
#   1. the CPU harness (bench/nccl_plugin_overhead: a 64 B / 4 KiB message through the plugin vs
#      the bare connection), CPU_RUNS times;
#   2. nccl-tests (scripts/gpu/nccl_tests_suite.sh, one process driving every GPU): OPS (the
#      issue's goal ops) REPEAT times and MORE_OPS MORE_REPEAT times, each under CONFIGS (plugin-tcp,
#      Socket, plugin-tcp with an injected failover, plugin-shm);
#   3. VARIANTS: the goal ops again under other settings, VARIANT_REPEAT times each, one column each;
#   4. scripts/gpu/plugin_tcp_table.py: medians per op and size as JSON rows {test, bytes,
#      plugin_us, socket_us, fault_us, shm_us, <variant>_us, correct} and a markdown table.
#
# Inputs: AFTER          folder holding libnccl-net-railcheck.so and nccl_plugin_overhead
#         LIBS           the plugin's shared-library dependencies (RAILCHECK_HWLIBS)
#         NCCL_TESTS_DIR nccl-tests checkout
#         OPS [sendrecv alltoall all_reduce], REPEAT [3]; MORE_OPS [all_gather reduce_scatter
#         broadcast], MORE_REPEAT [1]; CONFIGS [plugin-tcp socket fault-tcp plugin-shm]
#         VARIANTS       ';'-separated "name config VAR=value ..." entries, e.g.
#                        "stage_off plugin-tcp HA_NCCL_STAGE_BYTES=0;socket_fast socket NCCL_NSOCKS_PERTHREAD=4"
#         VARIANT_REPEAT [1]; CPU_RUNS [2], CPU_REPEAT [5]; RUN_TIMEOUT seconds per nccl-tests run [120]
#         DEADLINE: seconds after this script's start past which no nccl-tests run starts (those
#         left are not-run) [none]
# Output: $OUT/cpu_<i>.txt, $OUT/nt-*/, $OUT/plugin_tcp.json, the tables on stdout.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$PWD/plugin-tcp-perf}"
mkdir -p "$out"
[[ -n "${AFTER:-}" && -f "$AFTER/libnccl-net-railcheck.so" ]] || { echo "plugin_tcp_perf: set AFTER" >&2; exit 2; }
export LD_LIBRARY_PATH="${LIBS:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for i in $(seq "${CPU_RUNS:-2}"); do
  timeout 120 "$AFTER/nccl_plugin_overhead" --repeat "${CPU_REPEAT:-5}" --size 64 --size 4096 \
    --plugin "$AFTER/libnccl-net-railcheck.so" >"$out/cpu_$i.txt" 2>&1
  echo "== nccl_plugin_overhead run $i (rc $?)"; grep '^nccl_plugin\|^| tcp' "$out/cpu_$i.txt"
done
export NCCL_NVLS_ENABLE=0
base=(NCCL_TESTS_DIR="$NCCL_TESTS_DIR" RAILCHECK_HWLIBS="${LIBS:-}" RUN_TIMEOUT="${RUN_TIMEOUT:-120}" BUILD_DIR=/tmp/nt-build
  RAILCHECK_NCCL_PLUGIN_SO="$AFTER/libnccl-net-railcheck.so" MODES=one-process)
configs="${CONFIGS:-plugin-tcp socket fault-tcp plugin-shm}"
left() {  # SUITE_DEADLINE for a suite starting now (at least 1: the suite refuses 0)
  [[ -n "${DEADLINE:-}" ]] && echo "SUITE_DEADLINE=$((DEADLINE - SECONDS > 1 ? DEADLINE - SECONDS : 1))" || echo "SUITE_DEADLINE="
}
suite() {  # name, then VAR=value settings for nccl_tests_suite.sh and the runs
  local name="$1"; shift
  env "${base[@]}" "$(left)" "$@" OUT="$out/nt-$name" "$here/nccl_tests_suite.sh" >"$out/nt-$name.log" 2>&1
  tail -n 2 "$out/nt-$name.log"
}
suite main OPS="${OPS:-sendrecv alltoall all_reduce}" REPEAT="${REPEAT:-3}" CONFIGS="$configs"
[[ -n "${MORE_OPS-all_gather reduce_scatter broadcast}" ]] &&
  suite more OPS="${MORE_OPS-all_gather reduce_scatter broadcast}" REPEAT="${MORE_REPEAT:-1}" CONFIGS="$configs"
extra=()
IFS=';' read -r -a variants <<<"${VARIANTS:-}"
for v in "${variants[@]}"; do
  read -r -a words <<<"$v"
  [[ ${#words[@]} -ge 2 ]] || continue
  suite "${words[0]}" OPS="${OPS:-sendrecv alltoall all_reduce}" REPEAT="${VARIANT_REPEAT:-1}" CONFIGS="${words[1]}" "${words[@]:2}"
  [[ -f "$out/nt-${words[0]}/nccl_tests.json" ]] && extra+=(--extra "${words[0]}=${words[1]}:$out/nt-${words[0]}/nccl_tests.json")
done
[[ -f "$out/nt-main/nccl_tests.json" ]] || { echo "plugin_tcp_perf: no nccl-tests results (nt-main.log says why)" >&2; exit 1; }
cat "$out/nt-main/table.txt"
more=()
[[ -f "$out/nt-more/nccl_tests.json" ]] && more=("$out/nt-more/nccl_tests.json")
python3 "$here/plugin_tcp_table.py" --json "$out/plugin_tcp.json" "${extra[@]}" "$out/nt-main/nccl_tests.json" "${more[@]}"
