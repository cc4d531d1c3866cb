#!/usr/bin/env python3
"""The table of scripts/gpu/nccl_plugin_conformance.sh: correctness per op and size for each run
found in OUT (plugin, failover, socket), and busbw(plugin) / busbw(socket) where that ratio means
something. With both ranks on one GPU it does not: the two processes time-slice the GPU, so busbw
measures the sharing, not the transport, and the ratio column says n/a.

Usage: nccl_conformance_table.py OUT     writes OUT/summary.json; exit 1 if any result is wrong.
"""
import json
import os
import sys

RUNS = ("plugin", "failover", "socket")


def read_optional(path):
    return open(path).read().strip() if os.path.exists(path) else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    out = sys.argv[1]
    runs = {n: json.load(open(f"{out}/{n}.json")) for n in RUNS if os.path.exists(f"{out}/{n}.json")}
    if not runs:
        sys.exit(f"nccl_conformance_table: no run's JSON in {out}")
    first = next(iter(runs.values()))
    one_gpu = any(r.get("one_gpu") for r in runs.values())
    rows = {n: {(r["op"], r["bytes"]): r for r in run["rows"]} for n, run in runs.items()}
    fault = read_optional(f"{out}/fault.txt")
    failovers = read_optional(f"{out}/failover.count")
    failovers = int(failovers) if failovers is not None else None

    print(f"GPU {first['gpu']} x{1 if one_gpu else first['world']} ({first['world']} ranks), "
          f"NCCL {first['nccl']}, torch {first['torch']}; runs: {', '.join(runs)}")
    if "failover" in runs:
        print(f"failover run: fault '{fault}', {failovers} completed failovers in its log")
    if one_gpu:
        print("ratio n/a: both ranks time-slice one GPU, so busbw measures the GPU's sharing, not the "
              "transport; the bandwidth comparison needs 2 GPUs")
    print(f"{'op':>14} {'bytes':>10}  plugin failover socket  busbw plugin  busbw socket  ratio")

    def ok(r):
        return "-" if r is None else ("ok" if r["correct"] else "BAD")

    def bw(r):
        return f"{r['busbw_gbs']:9.3f}" if r else f"{'-':>9}"

    table = []
    for key in sorted({k for rs in rows.values() for k in rs}):
        got = {n: rows.get(n, {}).get(key) for n in RUNS}
        p, s = got["plugin"], got["socket"]
        ratio = p["busbw_gbs"] / s["busbw_gbs"] if (p and s and s["busbw_gbs"] > 0 and not one_gpu) else None
        print(f"{key[0]:>14} {key[1]:>10}  {ok(p):>6} {ok(got['failover']):>8} {ok(s):>6}  "
              f"{bw(p)} GB/s {bw(s)} GB/s  {'n/a' if ratio is None else f'{ratio:5.2f}'}")
        row = {"op": key[0], "bytes": key[1], "ratio": ratio}
        for n in RUNS:
            row[f"{n}_ok"] = got[n]["correct"] if got[n] else None
            row[f"busbw_{n}_gbs"] = got[n]["busbw_gbs"] if got[n] else None
        table.append(row)

    summary = {"gpu": first["gpu"], "gpus": 1 if one_gpu else first["world"], "ranks": first["world"],
               "nccl": first["nccl"], "torch": first["torch"], "runs": list(runs), "fault": fault,
               "failovers": failovers, "ratio_meaningful": not one_gpu, "table": table}
    with open(f"{out}/summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    bad = [t for t in table if any(t[f"{n}_ok"] is False for n in RUNS)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
