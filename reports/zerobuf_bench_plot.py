#!/usr/bin/python3
"""Latency and bus bandwidth of a zero-buffer benchmark run (scripts/gpu/zerobuf_bench.sh; issue 29;
docs/zerobuf.md): one panel per op, graph-captured time per call against size for NCCL and each
zero-buffer path measured (LL, direct, and what the library chose), log-log; a second row of
panels with the ratio zero-buffer / NCCL and the 0.70 target line.

Usage (Debian's python3 with python3-matplotlib, as reports/railcheck_report.py):
  /usr/bin/python3 reports/zerobuf_bench_plot.py zerobuf_bench.json --png docs/zerobuf/latency.png
"""
import argparse
import json
import sys

OPS = ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"]
SERIES = [("nccl_graph_us", "NCCL", "black", "-"), ("zb_ll_graph_us", "zerobuf LL", "tab:blue", "--"),
          ("zb_direct_graph_us", "zerobuf direct", "tab:orange", "--"),
          ("zb_auto_graph_us", "zerobuf (chosen)", "tab:green", "-")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--png", required=True)
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("zerobuf_bench_plot: needs python3-matplotlib (Debian: apt-get install python3-matplotlib)")
    with open(a.json) as f:
        rep = json.load(f)
    fig, axes = plt.subplots(2, len(OPS), figsize=(4.2 * len(OPS), 7), sharex=True,
                             gridspec_kw={"height_ratios": [2, 1]})
    for col, op in enumerate(OPS):
        rows = sorted((r for r in rep["rows"] if r["op"] == op), key=lambda r: r["bytes"])
        top, bottom = axes[0][col], axes[1][col]
        for key, label, color, style in SERIES:
            pts = [(r["bytes"], r[key]) for r in rows if r.get(key)]
            if pts:
                top.plot(*zip(*pts), style, color=color, label=label, marker=".", linewidth=1.2)
        ratio = [(r["bytes"], r["zb_auto_graph_us"] / r["nccl_graph_us"]) for r in rows
                 if r.get("zb_auto_graph_us") and r.get("nccl_graph_us")]
        if ratio:
            bottom.plot(*zip(*ratio), "-", color="tab:green", marker=".")
        bottom.axhline(0.70, color="tab:red", linewidth=0.8, linestyle=":", label="0.70 (target up to 1 MiB)")
        bottom.axhline(1.0, color="grey", linewidth=0.8)
        bottom.axvline(1 << 20, color="grey", linewidth=0.5, linestyle=":")
        top.set_title(op.replace("_", "-"))
        top.set_xscale("log", base=2)
        top.set_yscale("log")
        top.grid(True, which="both", alpha=0.3)
        bottom.set_ylim(0, 1.2)
        bottom.grid(True, alpha=0.3)
        bottom.set_xlabel("size (bytes)")
        if col == 0:
            top.set_ylabel("us per call (graph, median)")
            bottom.set_ylabel("zerobuf / NCCL")
            top.legend(fontsize=8)
            bottom.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"zero-buffer collectives vs NCCL {rep['nccl']}: {rep['gpus']} x {rep['gpu']}, {rep['date']}")
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
