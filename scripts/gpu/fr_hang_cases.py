#!/usr/bin/env python3
"""One rank of a PyTorch program that really hangs (or, for `healthy*`, does not) under NCCL,
with the Flight Recorder on. Run by scripts/gpu/fr_hangs.sh, one process per rank:

    fr_hang_cases.py --case skip_allreduce --rank R --world 2 --out DIR

Each case is a short training-like step whose ranks disagree in one way a real job does (the
list is CASES below). The process group's timeout is short (--timeout-s), so PyTorch's watchdog
declares the hang, dumps every rank's Flight Recorder buffer to $TORCH_FR_DUMP_TEMP_FILE<rank>
and tears the process down. A case that does not hang dumps its buffer itself at the end, so
every recording has the dumps a user would have. DIR/outcome_<rank>.txt says what happened.
"""
import argparse
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def dump_own_trace(out, rank):
    """What the watchdog writes on a timeout, written by hand for runs that did not hang."""
    c10d = torch._C._distributed_c10d
    blob = c10d._dump_nccl_trace(includeCollectives=True, includeStackTraces=True, onlyActive=False)
    with open(os.environ["TORCH_FR_DUMP_TEMP_FILE"] + str(rank), "wb") as f:
        f.write(blob)
    if hasattr(c10d, "_dump_nccl_trace_json"):  # the JSON form, beside (json/rank_<r>.json)
        text = c10d._dump_nccl_trace_json(includeCollectives=True, onlyActive=False)
        os.makedirs(os.path.join(out, "json"), exist_ok=True)
        with open(os.path.join(out, "json", f"rank_{rank}.json"), "wb" if isinstance(text, bytes) else "w") as f:
            f.write(text)


def healthy(rank, world, dev):
    """Every kind of call the reader must understand, issued the same on every rank."""
    x = torch.ones(1 << 20, device=dev)
    for _ in range(3):
        dist.all_reduce(x)
    out = torch.empty(world * 4096, device=dev, dtype=torch.bfloat16)
    dist.all_gather_into_tensor(out, torch.ones(4096, device=dev, dtype=torch.bfloat16))
    rs = torch.empty(2048, device=dev)
    dist.reduce_scatter_tensor(rs, torch.ones(world * 2048, device=dev))
    dist.broadcast(x, src=0)
    peer, prev = (rank + 1) % world, (rank - 1) % world
    buf = torch.empty(65536, device=dev)
    ops = [dist.P2POp(dist.isend, torch.ones(65536, device=dev), peer),
           dist.P2POp(dist.irecv, buf, prev)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    if rank == 0:
        dist.send(torch.ones(1024, device=dev), 1)
    elif rank == 1:
        dist.recv(torch.empty(1024, device=dev), 0)
    dist.all_reduce(x)


def healthy_uneven(rank, world, dev):
    """Ranks that call in different orders that still match: NCCL completes it."""
    a = torch.ones(1 << 16, device=dev)
    ring_in_order(a, a, rank, world)
    dist.all_reduce(a)


def skip_allreduce(rank, world, dev):
    """Rank 1 skips the second of three same-sized all-reduces (an `if` that differs per rank)."""
    x = torch.ones(1 << 20, device=dev)
    dist.all_reduce(x)
    if rank != 1:
        dist.all_reduce(x)
    dist.all_reduce(x)
    torch.cuda.synchronize()


def op_mismatch(rank, world, dev):
    """Rank 0 all-reduces where rank 1 all-gathers (a code path taken on one rank only)."""
    x = torch.ones(1 << 20, device=dev)
    dist.all_reduce(x)
    if rank == 0:
        dist.all_reduce(x)
    else:
        out = torch.empty(world * (1 << 20), device=dev)
        dist.all_gather_into_tensor(out, x)
    dist.all_reduce(x)
    torch.cuda.synchronize()


def size_mismatch(rank, world, dev):
    """The second all-reduce is twice as long on rank 1 (a shape computed from local data)."""
    x = torch.ones(1 << 20, device=dev)
    dist.all_reduce(x)
    y = torch.ones((1 << 22) * (2 if rank == 1 else 1), device=dev)
    dist.all_reduce(y)
    dist.all_reduce(x)
    torch.cuda.synchronize()


def p2p_cycle(rank, world, dev):
    """Every rank sends 64 MiB to the next first, then receives from the previous: each send
    waits for a receive that is never posted. A first round in a good order (rank 0 sends first,
    every other rank receives first) connects the same peers, so the hang is the GPUs' and not
    NCCL's connection setup on the host."""
    nxt, prev = (rank + 1) % world, (rank - 1) % world
    big = torch.ones(16 << 20, device=dev)
    inbox = torch.empty_like(big)
    ring_in_order(big, inbox, rank, world)
    dist.all_reduce(big)
    dist.send(big, nxt)
    dist.recv(inbox, prev)
    torch.cuda.synchronize()


def healthy_groups(rank, world, dev):
    """Subgroups beside the default group (even and odd ranks), each with its own collectives."""
    even = dist.new_group(list(range(0, world, 2)))
    odd = dist.new_group(list(range(1, world, 2)))
    mine = even if rank % 2 == 0 else odd
    x = torch.ones(1 << 18, device=dev)
    dist.all_reduce(x, group=mine)
    dist.all_reduce(x)
    dist.all_reduce(x, group=mine)


def skip_in_loop(rank, world, dev):
    """A training loop where rank 1 skips the gradient all-reduce of step 2 (a local condition):
    its later calls pair with the others' calls of another size."""
    grads = torch.ones(1 << 20, device=dev)
    loss = torch.ones(1, device=dev)
    for step in range(4):
        if not (rank == 1 and step == 2):
            dist.all_reduce(grads)
        dist.all_reduce(loss)
    torch.cuda.synchronize()


def batch_missing_send(rank, world, dev):
    """A batched exchange where rank 1 leaves out its send (a list built from local state)."""
    peer = 1 - rank
    x = torch.ones(1 << 20, device=dev)
    dist.all_reduce(x)
    ops = [dist.P2POp(dist.irecv, torch.empty(1 << 20, device=dev), peer)]
    if rank == 0:
        ops.append(dist.P2POp(dist.isend, x, peer))
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    dist.all_reduce(x)
    torch.cuda.synchronize()


def rank_dies(rank, world, dev):
    """Rank 1 exits (a crash) after two all-reduces; rank 0 goes on to the third."""
    x = torch.ones(1 << 20, device=dev)
    dist.all_reduce(x)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    if rank == 1:
        os._exit(17)
    dist.all_reduce(x)
    torch.cuda.synchronize()


def ring_in_order(out, inbox, rank, world):
    """One round of a ring that cannot deadlock: rank 0 sends first, every other rank receives first."""
    nxt, prev = (rank + 1) % world, (rank - 1) % world
    if rank == 0:
        dist.send(out, nxt)
        dist.recv(inbox, prev)
    else:
        dist.recv(inbox, prev)
        dist.send(out, nxt)


CASES = {f.__name__: f for f in (healthy, healthy_uneven, healthy_groups, skip_allreduce, skip_in_loop, op_mismatch,
                                 size_mismatch, batch_missing_send, p2p_cycle, rank_dies)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout-s", type=float, default=10.0)
    a = ap.parse_args()
    os.environ["NCCL_DEBUG_FILE"] = os.path.join(a.out, f"nccl_rank{a.rank}.log")
    dev = torch.device("cuda", a.rank % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    # MASTER_ADDR / MASTER_PORT come from the environment (env://), as under torchrun.
    dist.init_process_group("nccl", rank=a.rank, world_size=a.world, timeout=timedelta(seconds=a.timeout_s),
                            device_id=dev)
    outcome = os.path.join(a.out, f"outcome_{a.rank}.txt")
    with open(outcome, "w") as f:
        f.write(f"started {time.time():.3f}\n")
    CASES[a.case](a.rank, a.world, dev)
    torch.cuda.synchronize()
    dump_own_trace(a.out, a.rank)
    with open(outcome, "a") as f:
        f.write("completed\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
