#!/usr/bin/python3
"""Liveness sweep summary (issue 28; docs/failover.md): per family, the detection time, the time
from the fault until traffic flows again on the standby, and the false failovers, from the
results.jsonl of each `railcheck sweep sweeps/liveness-<family>.toml --out <dir>/<family>`.

Usage (Debian's python3 with python3-matplotlib, as reports/railcheck_report.py): /usr/bin/python3 reports/liveness_sweep.py <dir> [--png docs/sweeps/liveness.png]
Prints a Markdown table (one row per family, and per outage length for the flap family) and
draws the distribution of fault -> traffic flowing per family."""
import argparse
import json
import math
import os
import sys

FAMILIES = ["link-down", "flap", "congestion", "rnr", "stall"]


def pct(values, q):
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(q / 100 * len(v)) - 1))  # nearest rank
    return v[k]


def fmt(x):
    return "-" if x is None else f"{x:.1f}"


def load(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON ({e})")
    return rows


def summarize(name, rows):
    det = [r["detection_ms"] for r in rows if r.get("detection_ms") is not None]
    flow = [r["fault_to_flowing_ms"] for r in rows if r.get("fault_to_flowing_ms") is not None]
    return {
        "family": name,
        "runs": len(rows),
        "failed_over": sum(1 for r in rows if r.get("failovers", 0) > 0),
        "false": sum(r.get("false_failovers", 0) for r in rows),
        "bad": sum(1 for r in rows if r.get("outcome") != "delivered" or r.get("duplicates", 0) > 0),
        "det_p50": pct(det, 50), "det_p99": pct(det, 99), "det_max": max(det) if det else None,
        "flow_p50": pct(flow, 50), "flow_p99": pct(flow, 99), "flow_max": max(flow) if flow else None,
        "flow": flow,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--png")
    args = ap.parse_args()
    stats = []
    for fam in FAMILIES:
        path = os.path.join(args.dir, fam, "results.jsonl")
        if not os.path.exists(path):
            continue
        rows = load(path)
        stats.append(summarize(fam, rows))
        if fam == "flap":
            by_down = {}
            for r in rows:
                by_down.setdefault(float(r["params"]["faults.flap[0].down_ms"]), []).append(r)
            for d in sorted(by_down):
                stats.append(summarize(f"flap, {d:g} ms down", by_down[d]))
    print("| family | runs | runs with a failover | false failovers | not delivered exactly once | "
          "detection p50 / p99 / max (ms) | fault -> flowing on the standby p50 / p99 / max (ms) |")
    print("|---|---|---|---|---|---|---|")
    for s in stats:
        print(f"| {s['family']} | {s['runs']} | {s['failed_over']} | {s['false']} | {s['bad']} | "
              f"{fmt(s['det_p50'])} / {fmt(s['det_p99'])} / {fmt(s['det_max'])} | "
              f"{fmt(s['flow_p50'])} / {fmt(s['flow_p99'])} / {fmt(s['flow_max'])} |")
    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        shown = [s for s in stats if s["flow"] and "," not in s["family"]]
        quiet = [s for s in stats if s["family"] in ("congestion", "rnr", "stall")]
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [3, 2]})
        for s in shown:
            v = sorted(s["flow"])
            ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=f"{s['family']} ({len(v)} runs)")
        ax.axvline(50, color="grey", linestyle="--", linewidth=1)
        ax.text(49, 0.5, "50 ms target", color="grey", ha="right")
        ax.set_xlim(0, 60)
        ax.set_xlabel("fault -> first delivery on the standby (ms, simulated)")
        ax.set_ylabel("fraction of runs")
        ax.set_title("outages: traffic moved (HCA alone: 537 ms + replay)", fontsize=9)
        ax.legend(loc="upper left", fontsize=8)
        names = [s["family"] for s in quiet]
        bx.bar(names, [s["runs"] for s in quiet], color="tab:green", label="runs")
        bx.bar(names, [s["false"] for s in quiet], color="tab:red", label="false failovers")
        for i, s in enumerate(quiet):
            bx.text(i, s["runs"], f"{s['runs']} runs\n{s['false']} false", ha="center", va="bottom", fontsize=8)
        bx.set_ylim(0, max([s["runs"] for s in quiet] + [1]) * 1.3)
        bx.set_title("no outage: failovers are false alarms", fontsize=9)
        bx.legend(loc="lower right", fontsize=8)
        fig.suptitle("rail-liveness detector, SimGrid sweep (issue 28)")
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)


if __name__ == "__main__":
    main()
