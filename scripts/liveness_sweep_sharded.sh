#!/usr/bin/env bash
# Issue 28's no-outage families (or any liveness sweep files) on every core of a many-core host:
# bench/liveness_sweep sharded by point range, one results.jsonl per family, concatenated.
#   LIVENESS_SWEEP=build/bench/liveness_sweep OUT=sweep-results scripts/liveness_sweep_sharded.sh [family...]
# Families default to congestion rnr stall; J (default nproc) shards each. Afterwards:
#   /usr/bin/python3 reports/liveness_sweep.py $OUT
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(realpath "${LIVENESS_SWEEP:-$root/build/bench/liveness_sweep}")"
out="$(realpath -m "${OUT:-$PWD/sweep-results}")"
jobs="${J:-$(nproc)}"
[[ -x "$bin" ]] || { echo "liveness_sweep_sharded: no $bin (build the liveness_sweep target)" >&2; exit 2; }
families=("$@")
((${#families[@]})) || families=(congestion rnr stall)
for fam in "${families[@]}"; do
  file="$root/sweeps/liveness-$fam.toml"
  [[ -f "$file" ]] || { echo "liveness_sweep_sharded: no $file" >&2; exit 2; }
  total=$(python3 - "$file" <<'PY'
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
n = d["seeds"]["count"]
for a in d.get("axis", []):
    n *= len(a["values"]) if "values" in a else int(round((a["range"]["to"] - a["range"]["from"]) / a["range"]["step"])) + 1
print(n)
PY
)
  per=$(((total + jobs - 1) / jobs))
  mkdir -p "$out/$fam/shards"
  start=$SECONDS
  for ((s = 0; s < jobs; s++)); do
    (cd "$root/sweeps" && "$bin" "liveness-$fam.toml" "$out/$fam/shards/$s.jsonl" $((s * per)) "$per" \
      2>"$out/$fam/shards/$s.err") &
  done
  wait
  cat "$out/$fam"/shards/*.jsonl >"$out/$fam/results.jsonl"
  echo "$fam: $total points, $(wc -l <"$out/$fam/results.jsonl") rows, $((SECONDS - start)) s on $jobs cores"
done
