#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time over a corpus seeded from the shipped files
# (scenarios/, verify/models/, verify/traces/, sweeps/, scenarios/routing/, scenarios/sched/) and
# the bad-input reproducers (tests/data/fuzz-repro/), and prints the executions each ran clean.
#   fuzz/run.sh BUILD_DIR SECONDS_PER_TARGET [WORK_DIR] [JOBS]
# With KEEP_GOING=1 a target goes on after a finding (libFuzzer's fork mode), for long campaigns;
# FUZZ_TARGETS (space-separated) picks a subset; FUZZ_PARALLEL=N runs N targets at once (default 1;
# quickstart.sh uses one per core).
# BUILD_DIR was configured with CC=clang CXX=clang++ -DRAILCHECK_FUZZ=ON (docs/fuzzing.md).
# Exit 1 if a target found a crash, a leak, a timeout or an out-of-memory input: the input is in
# WORK_DIR/artifacts/<target>/, and `BUILD_DIR/fuzz/<target> <input>` replays it.
set -euo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS_PER_TARGET [WORK_DIR] [JOBS]}
secs=${2:?seconds per target}
[ "$secs" -gt 0 ] || { echo "SECONDS_PER_TARGET must be positive (libFuzzer reads 0 as: forever)" >&2; exit 2; }
work=${3:-$build/fuzz-work}
jobs=${4:-1}
src=${RAILCHECK_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
repro=$src/tests/data/fuzz-repro

seeds() {  # target -> seed files
  case $1 in
    fuzz_scenario) ls "$src"/scenarios/*.toml "$src"/sweeps/*.scenario.toml "$repro"/*.toml ;;
    fuzz_check_spec) ls "$src"/verify/models/*.toml ;;
    fuzz_trace) ls "$repro"/*.json "$src"/verify/traces/*.json ;;
    fuzz_sweep_spec) ls "$src"/sweeps/*.toml "$repro"/hang-sweep-*.toml ;;
    fuzz_route_spec) ls "$src"/scenarios/routing/*.toml ;;
    fuzz_nccl_log) ls "$src"/scenarios/sched/*.log "$repro"/*.log ;;
    fuzz_sched_trace) ls "$src"/scenarios/sched/*.jsonl ;;
    fuzz_sched_scenario) ls "$src"/scenarios/sched/*.toml ;;
    fuzz_groundtruth) groundtruth_seeds ;;
    fuzz_wire_codecs|fuzz_text_fields) ;;
  esac
}

# Ground-truth recordings: a profiler trace is seeded as "0<trace>", a NCCL log as "1<log>" (the
# first byte picks the parser, fuzz/fuzz_groundtruth.cpp). Written under WORK, listed here.
groundtruth_seeds() {
  local d=$work/seeds/fuzz_groundtruth n=0
  mkdir -p "$d"
  for f in "$src"/scenarios/groundtruth/*/railcheck-prof-*-r0.jsonl; do
    [ -f "$f" ] || continue
    { printf 0; head -c 60000 "$f"; } >"$d/trace-$n"; n=$((n + 1))
  done
  for f in "$src"/scenarios/groundtruth/*/rank0.log; do
    [ -f "$f" ] || continue
    { printf 1; head -c 60000 "$f"; } >"$d/log-$n"; n=$((n + 1))
  done
  ls "$d"/* 2>/dev/null || true
}

all_targets=(fuzz_groundtruth fuzz_scenario fuzz_check_spec fuzz_trace fuzz_sweep_spec fuzz_route_spec fuzz_nccl_log
             fuzz_sched_trace fuzz_sched_scenario fuzz_wire_codecs fuzz_text_fields fuzz_auth_codecs)
# FUZZ_TARGETS="fuzz_trace fuzz_nccl_log" runs only those (e.g. one target per core in a campaign).
read -r -a targets <<<"${FUZZ_TARGETS:-${all_targets[*]}}"
run_target() {  # target -> one result line in $work/$t.result
  local t=$1 exe=$build/fuzz/$1 corpus=$work/corpus/$1 art=$work/artifacts/$1/ log=$work/$1.log rc execs found result
  rm -rf "$art"
  mkdir -p "$corpus" "$art"
  # Inputs the campaigns found (tests/data/fuzz-found/<target>-*) stay in every corpus.
  for f in $(seeds "$t") $(ls "$src"/tests/data/fuzz-found/"$t"-* 2>/dev/null); do
    cp -f "$f" "$corpus/seed-$(basename "$f")"
  done
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a memory bomb is a finding.
  # Small inputs keep the loaders honest about their own limits (max_len 64 KiB, the long-line
  # reproducer is 200 KB and runs as a regression test instead).
  set +e
  if [ "$jobs" -gt 1 ] || [ "${KEEP_GOING:-0}" = 1 ]; then
    "$exe" "$corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$art" -print_final_stats=1 -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 >"$log" 2>&1
  else
    "$exe" "$corpus" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1
  fi
  rc=$?
  set -e
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$' || true)
  [ -n "$execs" ] || execs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  found=$(ls "$art" | wc -l)
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    result="FOUND ($found in $art, log $log)"
  else
    result=clean
  fi
  printf '%-22s %12s %8s  %s\n' "$t" "${execs:-?}" "$secs" "$result" >"$work/$t.result"
}

for t in "${targets[@]}"; do
  [ -x "$build/fuzz/$t" ] || { echo "missing $build/fuzz/$t (build the railcheck_fuzz target)" >&2; exit 2; }
done
mkdir -p "$work"
parallel=${FUZZ_PARALLEL:-1}
[ "$parallel" -ge 1 ] || { echo "FUZZ_PARALLEL must be at least 1" >&2; exit 2; }
for t in "${targets[@]}"; do
  rm -f "$work/$t.result"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_target "$t" &
done
wait
failed=0
printf '%-22s %12s %8s  %s\n' target executions seconds result
for t in "${targets[@]}"; do
  if [ -f "$work/$t.result" ]; then
    cat "$work/$t.result"
    grep -q ' clean$' "$work/$t.result" || failed=1
  else
    printf '%-22s %12s %8s  %s\n' "$t" ? "$secs" "no result (the runner itself failed)"
    failed=1
  fi
done
exit $failed
