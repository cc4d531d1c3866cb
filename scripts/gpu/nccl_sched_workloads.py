"""One rank of one ground-truth workload for the scheduler model (issue 14).

Run by scripts/gpu/nccl_sched_groundtruth.sh, once per rank:
    RANK=r WORLD_SIZE=2 MASTER_ADDR=.. MASTER_PORT=.. python3 nccl_sched_workloads.py WORKLOAD
The NCCL environment (NCCL_PROFILER_PLUGIN, NCCL_DEBUG, channel/proto/algo limits) comes from the
caller. Every workload is a fixed sequence of operations, the same on both ranks, so the recorded
profiler trace and the COLL log can be compared with the model's prediction.
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


WORKLOADS = {
    "singles": singles,
    "single_ops": single_ops,
    "batched_p2p": batched_p2p,
    "uneven_p2p": uneven_p2p,
    "coalesced_colls": coalesced_colls,
    "many_small": many_small,
    "mixed_group": mixed_group,
    "colls_and_p2p": colls_and_p2p,
}


def main():
    name = sys.argv[1]
    fn = WORKLOADS[name.split(":")[0]]
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(0)
    device = torch.device("cuda", 0)
    dist.init_process_group("nccl", rank=rank, world_size=int(os.environ["WORLD_SIZE"]), device_id=device)
    fn(rank, device)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    if rank == 0:
        print(f"workload {name} done: torch {torch.__version__} nccl "
              f"{'.'.join(str(v) for v in torch.cuda.nccl.version())} gpu {torch.cuda.get_device_name(0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
