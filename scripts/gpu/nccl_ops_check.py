#!/usr/bin/env python3
"""NCCL collectives and send/recv between 2 ranks, with data checks and bus bandwidth.

Run by scripts/gpu/nccl_plugin_conformance.sh once per transport (our plugin, our plugin with a
failover injected, NCCL's Socket transport); the environment (NCCL_NET_PLUGIN, NCCL_NET,
NCCL_P2P_DISABLE, ...) is set by the caller and inherited by the two spawned ranks.

For every op and size: the result is checked element by element against the value computed on
the host (int32 data, so sums are exact), then the op is timed and bus bandwidth computed the way
nccl-tests does (busbw = algbw * factor; all_reduce 2(n-1)/n, all_gather and reduce_scatter
(n-1)/n, send/recv 1). Writes one JSON file with every number.

With --one-gpu both ranks share GPU 0 and each gets its own NCCL_HOSTID, so NCCL takes them for
two hosts and carries every byte over the network transport (the plugin under test), as between
two nodes. The two processes time-slice the GPU: bandwidth then says little, correctness all.

Usage: nccl_ops_check.py --label plugin --json OUT.json [--min-bytes 8] [--max-bytes 268435456]
                         [--one-gpu]
       nccl_ops_check.py --count-collectives [--min-bytes 8] [--max-bytes N]
           prints how many collectives one run issues (no GPU, no torch): the fault threshold
           of nccl_plugin_conformance.sh is derived from it, so the fault is sure to fire.
"""
import argparse
import json
import os
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError:  # --count-collectives needs no torch
    torch = dist = mp = None

WORLD = 2
OPS = ["all_reduce", "all_gather", "reduce_scatter", "send_recv"]


def sizes(min_bytes, max_bytes):
    out, s = [], min_bytes
    while s <= max_bytes:
        out.append(s)
        s *= 8 if s < (1 << 20) else 4
    if out[-1] != max_bytes:
        out.append(max_bytes)
    return out


def iterations(nbytes):
    """Timed iterations per size; every size also runs 2 warm-ups, one checked run, one flag all_reduce."""
    return 20 if nbytes <= (1 << 20) else (5 if nbytes <= (64 << 20) else 2)


def collectives_per_run(min_bytes, max_bytes):
    """A lower bound on the collectives one rank issues in a run (send/recv not counted: NCCL may
    map p2p to other channels). Each collective puts at least one message on the send comm of
    channel 0, so a per-comm message threshold below this count is sure to be reached."""
    total = 0
    for op in OPS:
        for nbytes in sizes(min_bytes, max_bytes):
            total += 1  # the all_reduce of the correctness flags
            if op != "send_recv":
                total += 1 + 2 + iterations(nbytes)  # checked run, warm-ups, timed iterations
    return total


def bus_factor(op):
    n = WORLD
    return {"all_reduce": 2 * (n - 1) / n, "all_gather": (n - 1) / n, "reduce_scatter": (n - 1) / n,
            "send_recv": 1.0}[op]


def fill(rank, count, salt, device):
    # Deterministic, rank-dependent int32 values small enough that a 2-rank sum never overflows.
    idx = torch.arange(count, dtype=torch.int64, device=device)
    return ((idx * 131 + rank * 7919 + salt * 17) % 100003).to(torch.int32)


def run_op(op, rank, nbytes, device, salt):
    """Runs `op` once on `nbytes` per rank; returns (ok, detail)."""
    count = max(1, nbytes // 4)
    if op == "all_reduce":
        t = fill(rank, count, salt, device)
        dist.all_reduce(t)
        want = sum(fill(r, count, salt, device) for r in range(WORLD))
        return torch.equal(t, want), ""
    if op == "all_gather":
        t = fill(rank, count, salt, device)
        out = torch.empty(count * WORLD, dtype=torch.int32, device=device)
        dist.all_gather_into_tensor(out, t)
        want = torch.cat([fill(r, count, salt, device) for r in range(WORLD)])
        return torch.equal(out, want), ""
    if op == "reduce_scatter":
        count = max(WORLD, count - count % WORLD)
        t = fill(rank, count, salt, device)
        out = torch.empty(count // WORLD, dtype=torch.int32, device=device)
        dist.reduce_scatter_tensor(out, t)
        full = sum(fill(r, count, salt, device) for r in range(WORLD))
        want = full[rank * (count // WORLD):(rank + 1) * (count // WORLD)]
        return torch.equal(out, want), ""
    # send_recv: both directions at once, as a batched p2p op (rank 0 <-> rank 1).
    peer = 1 - rank
    t = fill(rank, count, salt, device)
    out = torch.empty(count, dtype=torch.int32, device=device)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, t, peer), dist.P2POp(dist.irecv, out, peer)])
    for r in reqs:
        r.wait()
    return torch.equal(out, fill(peer, count, salt, device)), ""


def time_op(op, rank, nbytes, device, iters):
    count = max(1, nbytes // 4)
    if op == "reduce_scatter":
        count = max(WORLD, count - count % WORLD)
    t = torch.ones(count, dtype=torch.int32, device=device)
    out_big = torch.empty(count * WORLD, dtype=torch.int32, device=device)
    out_small = torch.empty(max(1, count // WORLD), dtype=torch.int32, device=device)
    out_same = torch.empty(count, dtype=torch.int32, device=device)
    peer = 1 - rank

    def once():
        if op == "all_reduce":
            dist.all_reduce(t)
        elif op == "all_gather":
            dist.all_gather_into_tensor(out_big, t)
        elif op == "reduce_scatter":
            dist.reduce_scatter_tensor(out_small, t)
        else:
            for r in dist.batch_isend_irecv([dist.P2POp(dist.isend, t, peer), dist.P2POp(dist.irecv, out_same, peer)]):
                r.wait()

    for _ in range(2):
        once()
    torch.cuda.synchronize(device)
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        once()
    torch.cuda.synchronize(device)
    elapsed = (time.perf_counter() - start) / iters
    bytes_moved = count * 4
    algbw = bytes_moved / elapsed / 1e9
    return elapsed, algbw, algbw * bus_factor(op)


def worker(rank, args, queue):
    os.environ["RANK"] = str(rank)
    os.environ["LOCAL_RANK"] = str(rank)
    gpu = 0 if args.one_gpu else rank
    if args.one_gpu:
        # NCCL's host hash comes from NCCL_HOSTID when set: two "hosts", so no P2P/SHM between
        # them and no "Duplicate GPU detected" refusal.
        os.environ["NCCL_HOSTID"] = f"railcheck-rank{rank}"
    torch.cuda.set_device(gpu)
    device = torch.device("cuda", gpu)
    dist.init_process_group("nccl", rank=rank, world_size=WORLD)
    rows = []
    for op in OPS:
        for nbytes in sizes(args.min_bytes, args.max_bytes):
            ok, _ = run_op(op, rank, nbytes, device, salt=len(rows))
            ok_all = torch.tensor([1 if ok else 0], device=device)
            dist.all_reduce(ok_all)
            iters = iterations(nbytes)
            elapsed, algbw, busbw = time_op(op, rank, nbytes, device, iters)
            rows.append({"op": op, "bytes": nbytes, "correct": int(ok_all.item()) == WORLD,
                         "time_us": elapsed * 1e6, "algbw_gbs": algbw, "busbw_gbs": busbw})
    dist.barrier()
    if rank == 0:
        queue.put(rows)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label")
    ap.add_argument("--json")
    ap.add_argument("--count-collectives", action="store_true",
                    help="print the lower bound on collectives per run and exit (no GPU needed)")
    ap.add_argument("--min-bytes", type=int, default=8)
    ap.add_argument("--max-bytes", type=int, default=256 << 20)
    ap.add_argument("--one-gpu", action="store_true", help="both ranks on GPU 0, one NCCL_HOSTID each")
    args = ap.parse_args()
    if args.count_collectives:
        print(collectives_per_run(args.min_bytes, args.max_bytes))
        return 0
    if not args.label or not args.json:
        ap.error("--label and --json are required for a run")
    if torch is None:
        print("nccl_ops_check: needs PyTorch with CUDA", file=sys.stderr)
        return 2
    if torch.cuda.device_count() < (1 if args.one_gpu else WORLD):
        print(f"nccl_ops_check: needs {WORLD} GPUs, found {torch.cuda.device_count()}", file=sys.stderr)
        return 2
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000))
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(worker, args=(args, queue), nprocs=WORLD, join=True)
    rows = queue.get()
    result = {"label": args.label, "torch": torch.__version__, "one_gpu": args.one_gpu,
              "nccl": ".".join(str(v) for v in torch.cuda.nccl.version()),
              "gpu": torch.cuda.get_device_name(0), "world": WORLD, "rows": rows}
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    bad = [r for r in rows if not r["correct"]]
    for r in rows:
        print(f"{args.label:>14} {r['op']:>14} {r['bytes']:>10} B  {'ok ' if r['correct'] else 'BAD'} "
              f"{r['time_us']:10.1f} us  busbw {r['busbw_gbs']:8.3f} GB/s")
    if bad:
        print(f"nccl_ops_check: {len(bad)} results differ from the expected values", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
