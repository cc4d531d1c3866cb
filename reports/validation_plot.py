#!/usr/bin/python3
"""Simulated vs measured, per scenario and metric (issue 41; docs/validation.md): reads the JSON
that `railcheck validate SCENARIO.toml --json F` writes, one file per scenario, and prints a
Markdown table (sim median, lab median and range, agreement) and draws one panel per metric with
a point per scenario: the sim's median and the lab's median with the range of its runs.

Usage (Debian's python3 with python3-matplotlib):
  /usr/bin/python3 reports/validation_plot.py out/*.json [--png docs/validation.png]
Exit 0 when every scenario agreed, 1 when one did not, 2 on bad input."""
import argparse
import json
import sys

# The rows `railcheck validate` writes, in the order a reader wants them.
METRICS = [
    ("detection_ms", "detection after the fault (ms)"),
    ("first_replayed_delivery_ms", "first replayed delivery (ms)"),
    ("false_failover_ms", "false failover after the disturbance began (ms)"),
    ("goodput_gbps", "goodput, whole stream (Gb/s)"),
    ("goodput_before_gbps", "goodput before the fault (Gb/s)"),
    ("goodput_after_gbps", "goodput after the switch (Gb/s)"),
    ("error_reported_ms", "connection error reported (ms)"),
    ("failovers", "failovers"),
    ("false_failovers", "false failovers"),
    ("lost", "messages lost"),
    ("delivered_after_fault", "delivered after the fault (ended connections)"),
    ("duplicated", "messages duplicated"),
]
DRAWN = {"detection_ms", "first_replayed_delivery_ms", "goodput_gbps", "goodput_before_gbps", "goodput_after_gbps",
         "error_reported_ms", "failovers"}


class BadInput(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise BadInput(f"{path}: {e}")
    for key in ("scenario", "rows", "outcome", "agree"):
        if key not in j:
            raise BadInput(f"{path}: no '{key}': not the JSON of `railcheck validate --json`")
    rows = {}
    for r in j["rows"]:
        if not isinstance(r, dict) or "metric" not in r:
            raise BadInput(f"{path}: a row without 'metric'")
        rows[r["metric"]] = r
    return {"scenario": j["scenario"], "outcome": j["outcome"], "agree": bool(j["agree"]), "rows": rows}


def cell(x):
    return "-" if x is None else f"{x:.2f}"


def spread(values):
    if not values or len(values) < 2 or min(values) == max(values):
        return ""
    return f" ({min(values):.2f}-{max(values):.2f})"


def table(results):
    """One Markdown line per scenario and measured metric."""
    out = ["| scenario | metric | sim | lab (median; range) | agree |", "|---|---|---|---|---|"]
    for res in results:
        out.append(f"| {res['scenario']} | outcome | {res['outcome'].get('sim')} | {res['outcome'].get('hardware')} | "
                   f"{'yes' if res['outcome'].get('sim') == res['outcome'].get('hardware') else 'NO'} |")
        for metric, _ in METRICS:
            r = res["rows"].get(metric)
            if r is None or (r.get("sim") is None and r.get("hardware") is None):
                continue
            out.append(f"| {res['scenario']} | {metric} | {cell(r.get('sim'))}{spread(r.get('sim_runs'))} | "
                       f"{cell(r.get('hardware'))}{spread(r.get('hardware_runs'))} | "
                       f"{'yes' if r.get('agree') else 'NO'} |")
    return "\n".join(out)


def draw(results, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [(m, label) for m, label in METRICS
             if m in DRAWN and any(res["rows"].get(m, {}).get("hardware") is not None for res in results)]
    cols = min(3, len(shown))
    rows = (len(shown) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False)
    for extra in axes.flat[len(shown):]:
        extra.set_visible(False)
    names = [res["scenario"] for res in results]
    for ax, (metric, label) in zip(axes.flat, shown):
        labelled = set()

        def once(name):  # each series named once per panel, whichever scenario has it first
            if name in labelled:
                return None
            labelled.add(name)
            return name

        for i, res in enumerate(results):
            r = res["rows"].get(metric)
            if not r:
                continue
            if r.get("sim") is not None:
                ax.plot(i - 0.12, r["sim"], "o", color="tab:blue", label=once("sim"))
            runs = r.get("hardware_runs") or []
            if r.get("hardware") is not None:
                lo = r["hardware"] - min(runs) if runs else 0
                hi = max(runs) - r["hardware"] if runs else 0
                ax.errorbar(i + 0.12, r["hardware"], yerr=[[lo], [hi]], fmt="s", color="tab:orange" if r.get("agree")
                            else "tab:red", capsize=3, label=once("lab (median, range)"))
        # Detection at 20 ms beside a soft RTO's 1 s: a log scale keeps both readable.
        values = [v for res in results for v in [res["rows"].get(metric, {}).get("sim"),
                                                 res["rows"].get(metric, {}).get("hardware")] if v]
        if metric.endswith("_ms") and values and min(values) > 0 and max(values) / min(values) > 20:
            ax.set_yscale("log")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
        ax.set_title(label, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes.flat[0].legend(fontsize=8)
    fig.suptitle("railcheck validate: SimGrid vs the netns lab (red: outside the tolerance)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", nargs="+", help="files written by `railcheck validate ... --json F`")
    p.add_argument("--png", help="draw the side-by-side figure here")
    a = p.parse_args(argv)
    try:
        results = [load(path) for path in a.json]
    except BadInput as e:
        print(f"validation_plot: {e}", file=sys.stderr)
        return 2
    print(table(results))
    if a.png:
        draw(results, a.png)
        print(f"\nfigure: {a.png}")
    return 0 if all(res["agree"] for res in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
