#!/usr/bin/env bash
# railcheck quickstart: install what is missing, build, and run.
#   ./quickstart.sh run    build, then run the default scenario (scenarios/primary-dies.toml)
#   ./quickstart.sh test   build, then run the whole test suite, plus an ASan+UBSan build of it and
#                          a TSan build of the tests with railcheck's own threads, and every
#                          libFuzzer target (fuzz/) for a few seconds each. Each build after the
#                          first runs at low priority beside the tests before it (docs/ci.md).
# Works on a fresh Debian 12 machine as root; safe to run again (installs only what is missing).
set -euo pipefail
cd "$(dirname "$0")"

mode="${1:-}"
case "$mode" in
  run|test) ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac

jobs="$(nproc 2>/dev/null || echo 2)"
# Line tables only (file:line in backtraces and sanitizer reports, no variables): the test files
# compile in about 40% less CPU time than with full -g. Configure a tree by hand for a debugger.
debug_info=-DRAILCHECK_DEBUG_INFO=lines
# Unity builds: each target compiles its sources in batches of eight, so the heavy headers
# (SimGrid, CLI11, nlohmann/json, toml++) are parsed once per batch, not once per file (measured
# 2026-11-25, docs/ci.md). Fresh trees only: an edit recompiles its whole batch, so a tree
# configured by hand for day-to-day work leaves this off.
unity=-DCMAKE_UNITY_BUILD=ON
# Each phase says how long it took, so a slow CI run shows where its time went: wall seconds and
# the CPU seconds of everything run so far (user + system; on a busy machine the wall time grows,
# the CPU time much less).
times_file=$(mktemp)
logs=$(mktemp -d)
# A failing phase ends the run: take the background jobs with it.
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$times_file" "$logs"' EXIT
phase() {
  # `times` must run in this shell, not in a pipe or $(...) (a fresh subshell has no children):
  # its second line is the children's "user sys", e.g. "12m3.210s 1m0.500s".
  times >"$times_file"
  local cpu
  cpu=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } printf "%.0f", s }' "$times_file")
  echo "== quickstart: $1 (${SECONDS} s so far, ${cpu} CPU s)"
}
phase "install what is missing"
scripts/install-deps.sh
phase "build (RelWithDebInfo)"

# Warnings from railcheck's own sources fail this build and the two sanitizer trees (issue 44):
# gcc 12 at -O2 sees the most (flow-based -Wmaybe-uninitialized, -Warray-bounds), clang 14 its
# own (-Wnested-anon-types); each tree checked from scratch on 2026-11-28.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$debug_info" "$unity" -DRAILCHECK_WERROR=ON >/dev/null
cmake --build build -j "$jobs"

if [ "$mode" = run ]; then
  rm -rf "$times_file" "$logs"  # exec skips the EXIT trap
  exec build/cli/railcheck run scenarios/primary-dies.toml --json build/primary-dies.json
fi

# The tests never keep both cores busy (on 2 cores: ~1.3 cores over the RelWithDebInfo tests, ~1.6
# over the sanitizer tests), so the next tree builds beside them at the lowest CPU priority: the
# tests run as fast as alone, the build takes the idle time. Its output goes to a log, printed
# when it is waited for; a failure there fails the run like any other.
declare -A bg_pid
background() {  # name command...: a subshell at nice 19 (so a shell function can run), output to $logs/name.log
  local name=$1
  shift
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    "$@"
  ) >"$logs/$name.log" 2>&1 &
  bg_pid[$name]=$!
}
# Once the tests it ran beside are done, a background job (and everything it started) gets normal
# priority back, so other load on the machine cannot starve it (raising priority needs root; as
# another user it stays at 19).
unnice() {  # pid
  local pids=("$1") all=()
  while [ "${#pids[@]}" -gt 0 ]; do
    all+=("${pids[@]}")
    mapfile -t pids < <(ps -o pid= --ppid "$(IFS=,; echo "${pids[*]}")" 2>/dev/null | tr -d ' ' || true)
  done
  renice -n 0 -p "${all[@]}" >/dev/null 2>&1 || true
}
await() {  # name: wait for a background job, print its output, fail if it failed
  local rc=0
  unnice "${bg_pid[$1]}"
  wait "${bg_pid[$1]}" || rc=$?
  cat "$logs/$1.log"
  if [ "$rc" -ne 0 ]; then
    echo "== quickstart: $1 failed (exit $rc)" >&2
    exit "$rc"
  fi
}

# Sanitizer build of the same tests (ASan + UBSan), which also builds the libFuzzer targets.
# SimGrid switches its actors' stacks here as in the optimised tree (docs/ci.md says why ASan's
# reports stay sound; on threads, as until 2026-11-29, the SimGrid tests took 3-14x the CPU).
# clang, for two reasons: it leaves UBSan's checks out of
# third-party headers (cmake/ubsan-third-party.ignore), about a quarter less CPU time, while our
# code keeps every check and ASan's stay everywhere (two canary tests prove both); and libFuzzer's
# coverage hooks in every library (RAILCHECK_FUZZ) cost the tests about a tenth more CPU time,
# far less than a third tree for the fuzz targets would (measured 2026-11-25, docs/ci.md).
build_asan() {
  cmake -S . -B build-asan -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_BUILD_TYPE=Debug -DRAILCHECK_SANITIZE=ON -DRAILCHECK_FUZZ=ON -DRAILCHECK_BUILD_BENCH=OFF \
    -DRAILCHECK_WERROR=ON "$debug_info" "$unity" >/dev/null
  cmake --build build-asan -j "$jobs" --target railcheck_tests railcheck_fuzz
}

# ThreadSanitizer build of the tests whose threads are railcheck's own (the GPU host proxy, the
# TCP bootstrap, the model checker's threaded bfs) and of the NCCL plugin driven from several
# threads at once and the libfabric connection's two ends on two threads (the [threads] cases of
# tests/backends/hw/nccl and tests/backends/hw/libfabric: NCCL's proxy threads of one process,
# issue 33). Other tests that run libfabric's provider threads stay out: libfabric is not
# instrumented, so TSan cannot see its synchronisation and would report its writes as races (the
# plugin's cases run no provider thread: manual progress, FI_THREAD_DOMAIN).
tsan_tests=()
declare -A tsan_filter=([railcheck_tests_backends_hw_nccl]="[threads]" [railcheck_tests_backends_hw_libfabric]="[threads]")
for dir in tests/backends/hw/cuda tests/backends/hw/bootstrap tests/verify/parallel_bfs tests/backends/hw/nccl \
  tests/backends/hw/libfabric; do
  [ -d "$dir" ] && tsan_tests+=("railcheck_tests_$(echo "${dir#tests/}" | tr / _)")
done
build_tsan() {
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRAILCHECK_TSAN=ON -DRAILCHECK_BUILD_BENCH=OFF \
    -DRAILCHECK_WERROR=ON "$debug_info" "$unity" >/dev/null
  cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
}

# Every test runs in the ASan+UBSan tree below; this optimised tree runs the ones only it can
# run (CTest label "optimised", tests/CMakeLists.txt says which and docs/ci.md why): the full-size
# case of every test that is lighter under the sanitizers, the lab's timings, the release
# allocator, the nvcc build and the scripts. `ctest --test-dir build` alone still runs them all.
phase "optimised-only tests (the ASan+UBSan build beside them)"
background asan-build build_asan
# The optimised tests allocate on transparent huge pages, glibc's malloc and railcheck's jemalloc
# alike (the sanitizer trees have allocators of their own). libfabric's ofi_rxm zeroes two ~17 MB
# buffer pools (1024 eager buffers each way) as each rxm endpoint is enabled, and the plugin,
# conform and lab tests open hundreds of endpoints: one plugin failover case zeroes 3.3 GB of fresh
# memory, and a 4 KiB page fault costs this kind of 2-core VM about 10 us of CPU. On 2 MiB pages the
# same tests take half the CPU (back to back, 2026-11-29, docs/ci.md: the libfabric cases 32.6 ->
# 14.1 s, the plugin's 354 -> 172 s, one `railcheck validate` lab run 8.0 -> 4.7 s). The code
# under test is the same; only how the kernel backs its memory differs.
GLIBC_TUNABLES=glibc.malloc.hugetlb=1 MALLOC_CONF=thp:always \
  ctest --test-dir build --output-on-failure -j "$jobs" -L optimised
phase "ASan+UBSan build (what is left of it)"
await asan-build

phase "ASan+UBSan tests (the TSan build beside them)"
[ "${#tsan_tests[@]}" -gt 0 ] && background tsan-build build_tsan
# cmake/lsan-third-party.supp: a leak inside libfabric's fi_getinfo that is not ours (it says why).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS="suppressions=$PWD/cmake/lsan-third-party.supp:print_suppressions=0" \
  ctest --test-dir build-asan --output-on-failure -j "$jobs"

# The libFuzzer targets (docs/fuzzing.md), built in the ASan tree above: each runs for a few
# seconds over the shipped files and the bad-input reproducers. A finding fails the run and leaves
# its input in build-asan/fuzz-work/artifacts/. RAILCHECK_FUZZ_SECONDS=0 skips them.
#
# Two lanes: the NCCL plugin's [threads] cases (one process, 127 s on a core: most of this phase)
# in one; the other TSan binaries (about a minute) and then the fuzz targets, one per core at nice
# 19 (they take what the first lane leaves, then both cores once it ends), in the other. One TSan
# binary after another, the fuzz targets beside them, the phase took 183 s (2026-11-29).
phase "TSan tests and the short fuzz run"
tsan_run() {  # test binary: its cases (or those of its filter) under TSan
  local t=$1
  echo "== TSan: $t"
  # One process runs every [threads] case: the in-process ones start libfabric before any plugin
  # init could bound rxm's receive buffers, and the forked ranks inherit it (3.7 GB peak for three
  # ranks at 32, 9 GB at rxm's 128: more than the machine under TSan). So the bound the plugin
  # sets (fabric::kRxmMsgRxSize, provider_query.hpp) is set here for the whole binary.
  # ofi_rxm zeroes its buffer pools as it grows them, and TSan's memset walks the shadow of
  # every byte: that was two thirds of the tcp-rxm cases' time. 4 KiB eager buffers (rxm's
  # default 16 KiB) make the pools a quarter of the size and send larger messages through rxm's
  # rendezvous: the [threads] cases 307 -> 155 s, each tcp-rxm world 44-61 -> 14-27 s
  # (2026-11-29, docs/ci.md). Another valid rxm setting, not a smaller test.
  FI_OFI_RXM_MSG_RX_SIZE=32 FI_OFI_RXM_BUFFER_SIZE=4096 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    "build-tsan/tests/$t" ${tsan_filter[$t]:+"${tsan_filter[$t]}"}
}
long_lane=""
if [ "${#tsan_tests[@]}" -gt 0 ]; then
  await tsan-build
  for t in "${tsan_tests[@]}"; do
    if [ "$t" = railcheck_tests_backends_hw_nccl ]; then
      long_lane=$t
      tsan_run "$t" >"$logs/tsan-long.log" 2>&1 &
      long_pid=$!
    fi
  done
  for t in "${tsan_tests[@]}"; do
    [ "$t" = "$long_lane" ] || tsan_run "$t"
  done
fi
if [ "${RAILCHECK_FUZZ_SECONDS:-8}" != 0 ]; then
  FUZZ_PARALLEL="$jobs" nice -n 19 fuzz/run.sh build-asan "${RAILCHECK_FUZZ_SECONDS:-8}"
fi
if [ -n "$long_lane" ]; then
  long_rc=0
  wait "$long_pid" || long_rc=$?
  cat "$logs/tsan-long.log"
  if [ "$long_rc" -ne 0 ]; then
    echo "== quickstart: TSan $long_lane failed (exit $long_rc)" >&2
    exit "$long_rc"
  fi
fi

# A short swarm (docs/swarm.md): random worlds and fault schedules from a fresh first seed, which
# it prints, so every CI run explores seeds no run before it did; a finding prints the command
# that replays it. The fixed-seed swarm is a test (tests/swarm). RAILCHECK_SWARM_SECONDS=0
# skips it.
if [ "${RAILCHECK_SWARM_SECONDS:-45}" != 0 ]; then
  phase "short swarm (${RAILCHECK_SWARM_SECONDS:-45} s, fresh seed)"
  build/cli/railcheck swarm --for "${RAILCHECK_SWARM_SECONDS:-45}" -j "$jobs"
fi
phase "done"
