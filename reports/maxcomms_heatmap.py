#!/usr/bin/env python3
"""Heatmap of the maxComms study (sweeps/maxcomms.toml; seed 15.4, experiment C).

One panel per NIC preset; x: channels, y: in-flight WRs x maxRecvs. Each cell shows the
connections a modeled HCA opened before a limit refused one (colour, log scale), the resource
that refused it, and the seed's formula (§15.2) beside it: framed in red where the formula promises more
connections than the device holds. Usage:
  maxcomms_heatmap.py results.jsonl out.png
Malformed input is one line naming file and line, exit status 2.
"""
import json
import sys

SHORT = {"max_qp": "QP", "max_cqe": "CQE", "max_cq": "CQ", "max_qp_wr": "QP WR"}


def fail(msg):
    print(f"maxcomms_heatmap: {msg}", file=sys.stderr)
    sys.exit(2)


def read_rows(path):
    rows = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    p = r["params"]
                    rows.append({
                        "nic": p["topology.nic"],
                        "channels": int(p["engine.expected_channels"]),
                        "wr": int(p["engine.wr_per_conn"]),
                        "recvs": int(p["engine.max_recvs"]),
                        "opened": int(r["opened"]["connections"]),
                        "refused_by": r["opened"]["refused_by"],
                        "max_comms": int(r["max_comms"]),
                        "seed": int(r["seed_formula"]["max_comms"]),
                    })
                except (ValueError, KeyError, TypeError) as e:
                    fail(f"{path}:{n}: not a maxComms study row ({e.__class__.__name__}: {e})")
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    if not rows:
        fail(f"{path}: no rows")
    return rows


def main():
    if len(sys.argv) != 3:
        fail("usage: maxcomms_heatmap.py results.jsonl out.png")
    rows = read_rows(sys.argv[1])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    nics = sorted({r["nic"] for r in rows})
    channels = sorted({r["channels"] for r in rows})
    ys = sorted({(r["wr"], r["recvs"]) for r in rows})
    cell = {(r["nic"], r["channels"], r["wr"], r["recvs"]): r for r in rows}
    opened = [max(1, r["opened"]) for r in rows]
    norm = LogNorm(vmin=min(opened), vmax=max(opened))
    fig, axes = plt.subplots(1, len(nics), figsize=(5.2 * len(nics), 0.62 * len(ys) + 2.4), squeeze=False)
    over = 0
    for ax, nic in zip(axes[0], nics):
        grid = [[max(1, cell[(nic, c, w, m)]["opened"]) if (nic, c, w, m) in cell else float("nan")
                 for c in channels] for (w, m) in ys]
        im = ax.imshow(grid, cmap="viridis", norm=norm, aspect="auto", origin="lower")
        for yi, (w, m) in enumerate(ys):
            for xi, c in enumerate(channels):
                r = cell.get((nic, c, w, m))
                if r is None:
                    continue
                bad = r["seed"] > r["opened"]
                over += bad
                ax.text(xi, yi, f"{r['opened']} ({SHORT.get(r['refused_by'], r['refused_by'])})\nseed {r['seed']}",
                        ha="center", va="center", fontsize=7,
                        color="black" if norm(max(1, r["opened"])) > 0.6 else "white",
                        fontweight="bold" if bad else "normal")
                if bad:
                    ax.add_patch(Rectangle((xi - 0.46, yi - 0.44), 0.92, 0.88, fill=False, edgecolor="red",
                                           linewidth=2))
        ax.set_xticks(range(len(channels)), [str(c) for c in channels])
        ax.set_yticks(range(len(ys)), [f"{w} x {m}" for (w, m) in ys])
        ax.set_xlabel("channels per connection")
        ax.set_ylabel("in-flight WRs per comm x maxRecvs")
        ax.set_title(f"{nic}: connections opened (refused by)")
        fig.colorbar(im, ax=ax, label="connections a device holds (log)")
    fig.suptitle("maxComms study (seed 15.4 exp. C): one shared CQ per device, 2 paths, 1 two-sided QP per path;\n"
                 f"'seed N': the seed's formula (15.2); red frame: it promises more than the device holds ({over} cells)",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print(f"wrote {sys.argv[2]} ({len(rows)} points, {over} where the seed's formula over-promises)")


if __name__ == "__main__":
    try:
        main()
    except OSError as e:
        fail(f"{e.filename or ''}: {e.strerror}")
    except Exception as e:  # never a traceback: one line, and the internal-error code
        print(f"maxcomms_heatmap: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(70)
