#!/usr/bin/env bash
# bench/sim_scale at several sizes, each in its own process (peak RSS is per process), as one
# Markdown table for docs/benchmarks.md: outcome, engine events, CPU seconds, wall and peak memory.
#
# Usage: bench/sim_scale_series.sh [SIZE ...]           (default sizes: 1024 4096 16384)
#   BUILD=build      the build tree holding bench/sim_scale
#   RAILS=8 MESSAGES=4
#   PARALLEL=1       run the sizes at once, each pinned to its own core (a machine with at least
#                    as many idle cores as sizes, and memory for all of them); default: one by one
#   OUT=DIR          keep each run's full output there (default: a temporary folder)
# Exit status: 0 when every size delivered, 1 otherwise, 2 on bad use.
set -euo pipefail

build=${BUILD:-build}
rails=${RAILS:-8}
messages=${MESSAGES:-4}
bin="$build/bench/sim_scale"
if [[ ! -x "$bin" ]]; then
  echo "sim_scale_series: $bin not found: build it (ninja -C $build sim_scale) or set BUILD" >&2
  exit 2
fi
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(1024 4096 16384)
for n in "${sizes[@]}"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "sim_scale_series: size '$n' is not a positive rank count" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"

run_one() {  # size core
  local n=$1 core=$2
  local pin=()
  [[ -n "$core" ]] && pin=(taskset -c "$core")
  "${pin[@]}" "$bin" "$n" "$rails" "$messages" >"$out/sim_scale-$n.txt" 2>"$out/sim_scale-$n.err" || true
}

if [[ "${PARALLEL:-0}" == 1 ]]; then
  cores=$(nproc)
  if (( ${#sizes[@]} > cores )); then
    echo "sim_scale_series: ${#sizes[@]} sizes at once on $cores cores: run them one by one instead" >&2
    exit 2
  fi
  i=0
  for n in "${sizes[@]}"; do run_one "$n" "$i" & i=$((i + 1)); done
  wait
else
  for n in "${sizes[@]}"; do run_one "$n" ""; done
fi

# key=value fields of sim_scale's output
field() { grep -o "\b$2=[^ ]*" "$out/sim_scale-$1.txt" | head -1 | cut -d= -f2; }

head -1 "$out/sim_scale-${sizes[0]}.txt"
echo "| ranks x rails | connections | outcome | failovers | simulated (ms) | engine events | CPU user + sys (s) | wall (s) | max RSS (MB) | load at end |"
echo "|---|---|---|---|---|---|---|---|---|---|"
status=0
for n in "${sizes[@]}"; do
  if ! grep -q "^outcome=" "$out/sim_scale-$n.txt"; then
    echo "| $n x $rails | | did not finish (see $out/sim_scale-$n.err) | | | | | | | |"
    status=1
    continue
  fi
  outcome=$(field "$n" outcome)
  [[ "$outcome" == delivered ]] || status=1
  echo "| $n x $rails | $(field "$n" connections) | $outcome | $(field "$n" failovers) | $(field "$n" sim_time_ms)" \
    "| $(field "$n" engine_events) | $(field "$n" cpu_user_s) + $(field "$n" cpu_sys_s) | $(field "$n" wall_s)" \
    "| $(field "$n" max_rss_mb) | $(field "$n" load_1min) |"
done
echo "(each run's output: $out)"
exit $status
