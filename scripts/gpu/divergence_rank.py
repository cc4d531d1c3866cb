#!/usr/bin/env python3
"""One rank of a job whose ranks may run with different NCCL settings (issue 40). Run by
scripts/gpu/divergence_battery.sh, one process per rank, each with its own environment:

    divergence_rank.py --rank R --world N --out DIR [--workload sweep|skip|count] [--timeout-s 15]

The workload is a short sequence of collectives (all-reduce from 4 B to 64 MiB, then all-gather,
reduce-scatter, broadcast and a ring of send/recv), each run to completion and its values checked
before the next is issued, so where a job hangs is the operation its progress file names last.
DIR/progress_<rank>.txt gets, flushed and synced before and after every operation:

    start <i> <what>
    done <i> <what> ok | done <i> <what> WRONG <first bad index> <got> <want>
    completed                 (every operation issued and checked; then the communicator is destroyed)

`skip`: rank 1 leaves out operation 4 (an `if` that differs per rank); `count`: rank 1 issues
operation 4 with twice the elements. A hang ends in PyTorch's watchdog (the process group's
timeout) or in the driver script's kill; either way the progress file stops at the hung operation.
"""
import argparse
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

MIB = 1 << 20


def all_reduce(n):
    def run(rank, world, dev, i):
        x = torch.full((n,), float(rank + 1 + i), device=dev)
        dist.all_reduce(x)
        want = float(sum(r + 1 + i for r in range(world)))
        return x, want
    return f"all_reduce {n * 4} B", run


def all_gather(n):
    def run(rank, world, dev, i):
        out = torch.empty(world * n, device=dev)
        dist.all_gather_into_tensor(out, torch.full((n,), float(rank + i), device=dev))
        want = torch.arange(world, device=dev, dtype=torch.float32).repeat_interleave(n) + i
        return out, want
    return f"all_gather {n * 4} B per rank", run


def reduce_scatter(n):
    def run(rank, world, dev, i):
        out = torch.empty(n, device=dev)
        dist.reduce_scatter_tensor(out, torch.full((world * n,), float(rank + 1), device=dev))
        return out, float(sum(r + 1 for r in range(world)))
    return f"reduce_scatter {n * 4} B per rank", run


def broadcast(n):
    def run(rank, world, dev, i):
        x = torch.full((n,), float(rank * 10 + 7 if rank == 0 else -1), device=dev)
        dist.broadcast(x, src=0)
        return x, 7.0
    return f"broadcast {n * 4} B", run


def send_recv_ring(n):
    def run(rank, world, dev, i):
        nxt, prev = (rank + 1) % world, (rank - 1) % world
        inbox = torch.empty(n, device=dev)
        ops = [dist.P2POp(dist.isend, torch.full((n,), float(rank + 100), device=dev), nxt),
               dist.P2POp(dist.irecv, inbox, prev)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        return inbox, float(prev + 100)
    return f"send/recv ring {n * 4} B", run


# 4 B .. 64 MiB all-reduces cross every channel-count and protocol boundary NCCL's tuner has on
# NVLink and over its network transport; the rest covers the other functions and p2p.
SWEEP = [all_reduce(n) for n in (1, 256, 4096, 16384, 65536, 262144, MIB // 4, 2 * MIB, 16 * MIB)] + [
    all_gather(65536), reduce_scatter(65536), broadcast(MIB // 4), send_recv_ring(MIB // 4), all_reduce(MIB // 4)]


def workload(name, rank):
    ops = list(SWEEP)
    if name == "skip" and rank == 1:
        ops[4] = None
    if name == "count" and rank == 1:
        ops[4] = all_reduce(2 * 65536)
    return ops


class Progress:
    def __init__(self, path):
        self.f = open(path, "w")

    def line(self, text):
        self.f.write(text + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())


def check(got, want):
    """(first bad index, got, want) or None."""
    want_t = want if torch.is_tensor(want) else torch.full_like(got, want)
    bad = (got != want_t).nonzero()
    if bad.numel() == 0:
        return None
    k = int(bad[0])
    return k, float(got[k]), float(want_t[k])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workload", default="sweep", choices=("sweep", "skip", "count"))
    ap.add_argument("--timeout-s", type=float, default=15.0)
    a = ap.parse_args()
    dev = torch.device("cuda", a.rank % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    progress = Progress(os.path.join(a.out, f"progress_{a.rank}.txt"))
    dist.init_process_group("nccl", rank=a.rank, world_size=a.world, timeout=timedelta(seconds=a.timeout_s),
                            device_id=dev)
    for i, op in enumerate(workload(a.workload, a.rank)):
        if op is None:
            progress.line(f"skipped {i}")
            continue
        what, run = op
        progress.line(f"start {i} {what}")
        got, want = run(a.rank, a.world, dev, i)
        torch.cuda.synchronize()
        bad = check(got, want)
        progress.line(f"done {i} {what} " + ("ok" if bad is None else "WRONG {} {} {}".format(*bad)))
    progress.line("completed")
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
