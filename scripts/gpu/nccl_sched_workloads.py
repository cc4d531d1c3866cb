"""One rank of one ground-truth workload for the scheduler model (issue 14).

Run by scripts/gpu/nccl_sched_groundtruth.sh, once per rank:
    RANK=r WORLD_SIZE=n LOCAL_GPU=g MASTER_ADDR=.. MASTER_PORT=.. python3 nccl_sched_workloads.py WORKLOAD
The NCCL environment (NCCL_PROFILER_PLUGIN, NCCL_DEBUG, NCCL_HOSTID, channel/proto/algo limits)
comes from the caller; LOCAL_GPU (default 0) is the GPU this rank drives. Every workload is a fixed
sequence of operations, the same on every rank, so the recorded profiler trace and the COLL log can
be compared with the model's prediction. The first workloads are 2-rank ones (issue 14); `sweep`,
`p2p_n` and `coalesced_mixed` run on any number of ranks (issue 27).
"""
import os
import sys

import torch
import torch.distributed as dist

SIZES = [8, 256, 4096, 32768, 262144, 1 << 20, 8 << 20, 64 << 20]


def buf(nbytes, device):
    return torch.ones(max(1, nbytes // 4), dtype=torch.float32, device=device)


def singles(rank, device):
    for n in SIZES:
        dist.all_reduce(buf(n, device))


def single_ops(rank, device):
    for n in [4096, 262144, 8 << 20]:
        t = buf(n, device)
        dist.broadcast(t, src=0)
        dist.reduce(t, dst=1)
        out = torch.empty(t.numel() * 2, dtype=t.dtype, device=device)
        dist.all_gather_into_tensor(out, t)
        dist.reduce_scatter_tensor(t, out)


def batched_p2p(rank, device, sizes=None):
    peer = 1 - rank
    sizes = sizes or [4096, 262144, 4 << 20]
    for n in sizes:
        s, r = buf(n, device), buf(n, device)
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, s, peer), dist.P2POp(dist.irecv, r, peer)])
        for q in reqs:
            q.wait()


def uneven_p2p(rank, device):
    peer = 1 - rank
    mine = [1 << 20, 4096, 16 << 20]
    theirs = [4096, 1 << 20, 65536]
    for a, b in zip(mine, theirs):
        send_n, recv_n = (a, b) if rank == 0 else (b, a)
        s, r = buf(send_n, device), buf(recv_n, device)
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, s, peer), dist.P2POp(dist.irecv, r, peer)])
        for q in reqs:
            q.wait()


def coalesced(rank, device, n_ops=4, nbytes=262144):
    ts = [buf(nbytes, device) for _ in range(n_ops)]
    with dist._coalescing_manager(device=device, async_ops=True) as cm:
        for t in ts:
            dist.all_reduce(t)
    cm.wait()


def coalesced_colls(rank, device):
    coalesced(rank, device, 4, 262144)
    coalesced(rank, device, 3, 8 << 20)


def many_small(rank, device):
    coalesced(rank, device, 64, 4096)
    coalesced(rank, device, 300, 1024)


def mixed_group(rank, device):
    peer = 1 - rank
    a, s, r = buf(1 << 20, device), buf(65536, device), buf(65536, device)
    with dist._coalescing_manager(device=device, async_ops=True) as cm:
        dist.all_reduce(a)
        dist.isend(s, peer) if rank == 0 else dist.irecv(r, peer)
        dist.irecv(r, peer) if rank == 0 else dist.isend(s, peer)
    cm.wait()


def colls_and_p2p(rank, device):
    singles(rank, device)
    batched_p2p(rank, device)


# Per-rank bytes crossing NCCL 2.28's protocol and channel-count boundaries: the LL/LL128/Simple
# switches of the cost model, the Ring LL thread threshold times 1..24 channels, 16 KiB cells.
SWEEP_SIZES = [8, 96, 1024, 4096, 8192, 32768, 65536, 98304, 262144, 716800,
               1 << 20, 3 << 20, 16 << 20, 64 << 20]


def sweep_one(fn, nbytes, dtype, device, world):
    """One collective of `nbytes` per rank (its input for all_gather, its output for reduce_scatter)."""
    esize = torch.tensor([], dtype=dtype).element_size()
    n = max(1, nbytes // esize)
    t = torch.ones(n, dtype=dtype, device=device)
    if fn == "all_reduce":
        dist.all_reduce(t)
    elif fn == "broadcast":
        dist.broadcast(t, src=0)
    elif fn == "reduce":
        dist.reduce(t, dst=world - 1)
    elif fn == "all_gather":
        dist.all_gather_into_tensor(torch.empty(n * world, dtype=dtype, device=device), t)
    elif fn == "reduce_scatter":
        dist.reduce_scatter_tensor(t, torch.ones(n * world, dtype=dtype, device=device))


SWEEP_FNS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")


def sweep(rank, device, fns=SWEEP_FNS):
    """Each collective type of `fns`, each alone in its launch, at every size, in float32 and
    bfloat16. A forced algorithm takes the types it serves (NCCL 2.28: Tree only AllReduce, PAT only
    AllGather and ReduceScatter): `sweep:all_reduce` on the command line."""
    world = dist.get_world_size()
    for dtype in (torch.float32, torch.bfloat16):
        for fn in fns:
            for nbytes in SWEEP_SIZES:
                sweep_one(fn, nbytes, dtype, device, world)


def p2p_n(rank, device):
    """Grouped p2p on any number of ranks: a ring exchange (send right, receive left) and an
    all-to-all (one grouped send and receive per peer), each at several sizes."""
    world = dist.get_world_size()
    right, left = (rank + 1) % world, (rank - 1) % world
    for n in [1024, 65536, 1 << 20, 8 << 20]:
        s, r = buf(n, device), buf(n, device)
        reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, s, right), dist.P2POp(dist.irecv, r, left)])
        for q in reqs:
            q.wait()
    for n in [1024, 65536, 1 << 20, 8 << 20]:
        inp = buf(n * world, device)
        out = torch.empty_like(inp)
        dist.all_to_all_single(out, inp)


def coalesced_mixed(rank, device):
    """Groups NCCL aggregates and sorts: sizes within and beyond 4x of each other, given in
    neither ascending nor descending order (PyTorch coalesces one type per group)."""
    with dist._coalescing_manager(device=device, async_ops=True) as cm:
        for n in [65536, 4096, 4 << 20, 12288, 8192, 1 << 20]:
            dist.all_reduce(buf(n, device))
    cm.wait()
    with dist._coalescing_manager(device=device, async_ops=True) as cm:
        for n in [262144, 32768, 65536]:
            dist.all_reduce(torch.ones(n // 2, dtype=torch.bfloat16, device=device))
    cm.wait()


WORKLOADS = {
    "singles": singles,
    "single_ops": single_ops,
    "batched_p2p": batched_p2p,
    "uneven_p2p": uneven_p2p,
    "coalesced_colls": coalesced_colls,
    "many_small": many_small,
    "mixed_group": mixed_group,
    "colls_and_p2p": colls_and_p2p,
    "sweep": sweep,
    "p2p_n": p2p_n,
    "coalesced_mixed": coalesced_mixed,
    "sweep_and_p2p": lambda rank, device: (sweep(rank, device), p2p_n(rank, device), coalesced_mixed(rank, device)),
}


def main():
    name = sys.argv[1]
    base, _, arg = name.partition(":")
    fn = WORKLOADS[base]
    if base == "sweep" and arg:
        fns = tuple(arg.split(","))
        unknown = [f for f in fns if f not in SWEEP_FNS]
        if unknown:
            sys.exit(f"nccl_sched_workloads: sweep: unknown collectives {unknown}; known: {SWEEP_FNS}")
        fn = lambda rank, device: sweep(rank, device, fns)
    rank = int(os.environ["RANK"])
    gpu = int(os.environ.get("LOCAL_GPU", "0"))
    torch.cuda.set_device(gpu)
    device = torch.device("cuda", gpu)
    dist.init_process_group("nccl", rank=rank, world_size=int(os.environ["WORLD_SIZE"]), device_id=device)
    fn(rank, device)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    if rank == 0:
        print(f"workload {name} done: torch {torch.__version__} nccl "
              f"{'.'.join(str(v) for v in torch.cuda.nccl.version())} gpu {torch.cuda.get_device_name(gpu)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
