#!/usr/bin/env python3
"""Per-GPU and per-NIC timelines of a weight transfer (railcheck route weights --timeline).

Three panels per input, over simulated time: what each trainer GPU was doing (the stage that
took most of each bin), how busy each trainer NIC was sending (writes and cross-node gathers),
and how busy each rollout NIC was receiving. One column per input, e.g. the plan before and
after issue 34. Usage:
  routing_timeline.py out.png TIMELINE.json [LABEL] [TIMELINE.json [LABEL] ...]
Malformed input is one line naming the file, exit status 2.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

STAGE_COLOURS = ["#d62728", "#9467bd", "#1f77b4", "#2ca02c", "#7f7f7f"]  # cap wait, h2d, gather, gpu ops, barrier
IDLE = "#ffffff"


def fail(msg):
    print(f"routing_timeline: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            t = json.load(f)
        return t, t["bin_seconds"], t["nic_bytes_per_second"], t["stages"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"{path}: {e}")


def padded(rows, n):
    return [row + [0.0] * (n - len(row)) for row in rows]


def dominant_stage(stage_rows, trainer, bins, bin_s):
    """Per bin: index of the stage that took most of it (len(stages) when idle, i.e. done)."""
    out = []
    for b in range(bins):
        secs = [rows[trainer][b] if b < len(rows[trainer]) else 0.0 for rows in stage_rows]
        best = max(range(len(secs)), key=lambda i: secs[i])
        out.append(best if secs[best] > 0.05 * bin_s else len(secs))
    return out


def main():
    if len(sys.argv) < 3:
        fail("usage: routing_timeline.py out.png TIMELINE.json [LABEL] ...")
    out, rest = sys.argv[1], sys.argv[2:]
    inputs = []
    while rest:
        path = rest.pop(0)
        label = rest.pop(0) if rest and not rest[0].endswith(".json") else path
        inputs.append((path, label))
    loaded = [(load(p), label) for p, label in inputs]
    bins = max(max(len(r) for r in t["rollout_nic_rx_bytes"]) for (t, *_), _ in loaded)
    fig, axes = plt.subplots(3, len(loaded), figsize=(6.5 * len(loaded), 9), squeeze=False,
                             gridspec_kw={"height_ratios": [2, 2, 1]})
    for col, ((t, bin_s, rate, stages), label) in enumerate(loaded):
        end = bins * bin_s
        stage_rows = t["stage_seconds"]
        trainers = len(stage_rows[0])
        cmap = ListedColormap(STAGE_COLOURS[: len(stages)] + [IDLE])
        grid = [dominant_stage(stage_rows, r, bins, bin_s) for r in range(trainers)]
        ax = axes[0][col]
        ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=cmap, vmin=0, vmax=len(stages),
                  extent=(0, end, trainers, 0))
        ax.set_title(f"{label}: {t['simulated_seconds']:.3f} s (ideal {t['ideal_seconds']:.3f} s)")
        ax.set_ylabel("trainer GPU (stage)")
        for i, name in enumerate(stages):
            ax.plot([], [], color=STAGE_COLOURS[i], lw=6, label=name.replace("_", " "))
        ax.legend(loc="lower left", fontsize=7, ncol=len(stages), framealpha=0.9)
        tx = [[v / (rate * bin_s) for v in row] for row in padded(t["trainer_nic_tx_bytes"], bins)]
        rx = [[v / (rate * bin_s) for v in row] for row in padded(t["rollout_nic_rx_bytes"], bins)]
        ax = axes[1][col]
        im = ax.imshow(tx, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=1,
                       extent=(0, end, len(tx), 0))
        ax.set_ylabel("trainer NIC (send, busy)")
        fig.colorbar(im, ax=ax, fraction=0.03)
        ax = axes[2][col]
        im = ax.imshow(rx, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=1,
                       extent=(0, end, len(rx), 0))
        ax.axvline(t["ideal_seconds"], color="red", lw=1, ls="--")
        ax.set_ylabel("rollout NIC (receive)")
        ax.set_xlabel("simulated seconds (dashed: the ideal bound)")
        fig.colorbar(im, ax=ax, fraction=0.03)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
