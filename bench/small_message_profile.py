#!/usr/bin/env python3
"""Where a small message's instructions go (issue 32 item 1; docs/benchmarks.md has the method).

Runs bench/fabric_write_imm and bench/nccl_plugin_overhead under callgrind twice, with --quick
and without, dumping a profile part at every FabricRail::open (so each provider x size x path
run is a part of its own), and subtracts the quick part from the full one: what is left is the
cost of the extra 64 B messages (19 800 on tcp, 198 000 on shm), with setup, teardown and warm-up cancelled out. Each
function's self cost is put in one bucket by its name and object (libc leaves go with their
caller's object), and printed per message, with the calls per message of the functions that
count things (polls, allocations, locks, engine events).

  python3 bench/small_message_profile.py [BUILD_DIR] [--reuse]   (default build-plan; minutes)
--reuse analyses the profiles already in $RAILCHECK_PROFILE_DIR (default /tmp/railcheck_small_msg).
Not built by CMake; needs valgrind.
"""
import collections
import os
import re
import shutil
import subprocess
import sys

# RAILCHECK_PROFILE_DIR keeps two checkouts profiling on one machine apart.
OUT = os.environ.get("RAILCHECK_PROFILE_DIR", "/tmp/railcheck_small_msg")

# Per (provider, size) run, the part numbers of the plain/bare run and of the engine/plugin run
# (parts are cut at every FabricRail::open; see the benches for how many rails each side opens).
# Messages per run in --quick and in a full run (warm-up + bandwidth + latency writes): shm's 64 B
# run is ten times tcp's (bench/fabric_write_imm.cpp, loads_for).
TCP_64 = (32 + 2000 + 200, 32 + 20000 + 2000)
SHM_64 = (32 + 20000 + 2000, 32 + 200000 + 20000)
WRITE_IMM = {"opens": 6, "runs": {("shm", 0): ((3, 7), SHM_64), ("tcp;ofi_rxm", 3): ((21, 25), TCP_64)}}
PLUGIN = {"opens": 8, "runs": {("tcp;ofi_rxm", 0): ((5, 9), TCP_64)}}


def parse(path):
    """Self cost per function, function -> object, caller->callee inclusive cost and calls."""
    names, obs = {}, {}
    fn_ob = {}
    self_ = collections.Counter()
    edge_ir = collections.Counter()
    calls = collections.Counter()
    fn = cfn = ob = None
    pending = None

    def name(table, m):
        if m.group(2):
            table[m.group(1)] = m.group(2)
        return table[m.group(1)]

    for line in open(path, errors="replace"):
        if line.startswith("ob="):
            ob = name(obs, re.match(r"ob=\((\d+)\)(?: (.*))?", line.rstrip("\n")))
        elif line.startswith("cob="):
            name(obs, re.match(r"cob=\((\d+)\)(?: (.*))?", line.rstrip("\n")))
        elif line.startswith("fn="):
            fn = name(names, re.match(r"fn=\((\d+)\)(?: (.*))?", line.rstrip("\n")))
            fn_ob.setdefault(fn, ob)
        elif line.startswith("cfn="):
            cfn = name(names, re.match(r"cfn=\((\d+)\)(?: (.*))?", line.rstrip("\n")))
        elif line.startswith("calls="):
            pending = (cfn, int(line[6:].split()[0]))
        elif line[:1].isdigit() or line[:1] in "+-*":
            parts = line.split()
            if len(parts) < 2:
                continue
            ir = int(parts[1])
            if pending:
                callee, n = pending
                pending = None
                edge_ir[(fn, callee)] += ir
                calls[(fn, callee)] += n
            else:
                self_[fn] += ir
    return self_, fn_ob, edge_ir, calls


LIBC_LEAF = re.compile(r"^(__)?(pthread_|mem|str|__pthread|clock_gettime|__clock_gettime|__vdso|__memcpy|__memset|__memmove|"
                       r"__strncpy|send|sendmsg|recv|recvmsg|poll|epoll_wait|readv|writev)")

BUCKETS = [
    ("plugin (NetComm, ABI shim, its mutex)", re.compile(r"railcheck::nccl::|nccl_harness")),
    ("engine (HaConnection::handle and its actions)",
     re.compile(r"railcheck::(HaConnection|InflightTable|ReplayPolicy|SoftRto|Heartbeat|PathState|FailoverSequence|detail::)|"
                r"variant<railcheck::PostSend|railcheck::InlineOne|railcheck::WorkRequest|_Variant_storage")),
    ("completions (poll_rails, RcCompletionOrder, on_completion, acks)",
     re.compile(r"poll_rails|on_completion|on_write_event|RcCompletionOrder|release|acknowledge_delivery|on_delivery_ack|"
                r"control|Control|CompletionEvent|FabricRail::poll|landed_imms|completed_writes|WriteCompletion|"
                r"FabricConnection::progress|_M_default_append")),
    ("executor (execute, post_data, PendingQueue, std::function, op maps)",
     re.compile(r"execute|post_data|new_op|drop_op|PendingQueue|_Function|Post\b|fabric::Op|WriteOp|write_imm|feed|drain|"
                r"RequestResult|RequestId|RequestTag|_Rb_tree|_Hashtable|deque<railcheck::Event|variant<railcheck::Completion|"
                r"UserIsend|UserIrecv|FabricRail::(write|send|recv|tsend|trecv)|FabricConnection::(isend|irecv|test)|rail_memory|"
                r"_Prime_rehash")),
    ("timers (fire_timers, now())", re.compile(r"fire_timers|State::now|clock_gettime|vdso|steady_clock::now")),
]


def bucket_of(fn, ob):
    ob = ob or ""
    if fn.startswith("railcheck::FabricConnection::State::") and re.search(r"State::(execute|post_data|drain|feed|new_op|drop_op)\(", fn):
        return BUCKETS[3][0]
    if "libfabric" in ob:
        return "provider (libfabric, incl. its libc calls)"
    if "jemalloc" in ob or re.search(r"operator new|operator delete|^malloc$|^free$|sdallocx", fn):
        return "allocator (jemalloc)"
    if "libnccl-net" in ob and not re.search(r"railcheck::(nccl|Fabric|HaConn)", fn):
        pass
    for label, rx in BUCKETS:
        if rx.search(fn):
            return label
    if "vdso" in ob:
        return "timers (fire_timers, now())"
    if re.search(r"main$|bench::|anonymous namespace\)::run_|measure<", fn):
        return "bench loop"
    return "other"


def attribute(self_, fn_ob, edge_ir):
    """Bucket per function's self cost; a libc leaf follows its callers (through libc callers)."""
    callers = collections.defaultdict(list)
    for (a, b), ir in edge_ir.items():
        if ir > 0:
            callers[b].append((a, ir))

    def is_leaf(fn):
        return "libc" in (fn_ob.get(fn) or "") and LIBC_LEAF.search(fn) and callers.get(fn)

    def spread(fn, ir, out, depth=0):
        if depth < 3 and is_leaf(fn):
            tot = sum(c for _, c in callers[fn]) or 1
            for a, c in callers[fn]:
                spread(a, ir * c / tot, out, depth + 1)
        else:
            out[bucket_of(fn, fn_ob.get(fn) or "")] += ir

    out = collections.Counter()
    for fn, ir in self_.items():
        if is_leaf(fn):
            spread(fn, ir, out)
        else:
            out[bucket_of(fn, fn_ob.get(fn) or "")] += ir
    return out


def counted_calls(calls, fn_ob):
    """Calls per function of interest, summed over callers (callers in libfabric kept apart)."""
    want = {
        "fi_cq_read (FabricRail::poll)": r"^railcheck::fabric::FabricRail::poll\(",
        "FabricConnection::progress": r"^railcheck::FabricConnection::progress\(\)",
        "HaConnection::handle": r"^railcheck::HaConnection::handle\(",
        "engine actions executed (execute)": r"^railcheck::FabricConnection::State::execute\(",
        "post_data": r"^railcheck::FabricConnection::State::post_data\(",
        "fi post calls (FabricRail write/send/recv/tsend/trecv)": r"^railcheck::fabric::FabricRail::(write|send|recv|tsend|trecv)\(",
        "control sends (send_control_bytes)": r"^railcheck::FabricConnection::State::send_control_bytes\(",
        "operator new + malloc (ours)": r"^operator new|^malloc$",
        "pthread_mutex_lock (ours)": r"pthread_mutex_lock",
        "pthread_mutex_lock (libfabric)": r"pthread_mutex_lock",
        "memcpy (ours)": r"memcpy|memmove",
        "clock_gettime": r"clock_gettime",
        "FabricConnection::test": r"^railcheck::FabricConnection::test\(",
        "plugin test (entry)": r"entry::.*test\(",
    }
    res = collections.Counter()
    for (a, b), n in calls.items():
        aob = fn_ob.get(a) or ""
        for label, rx in want.items():
            if not re.search(rx, b):
                continue
            from_fabric = "libfabric" in aob
            if label.endswith("(libfabric)") != from_fabric and ("(ours)" in label or "(libfabric)" in label):
                continue
            if "(ours)" in label and ("jemalloc" in aob or "libstdc" in aob or "libc" in aob):
                continue
            res[label] += n
    return res


ALLOC = re.compile(r"^operator new|^malloc$")


def alloc_callers(calls, fn_ob):
    """Heap allocations per direct caller of ours (operator new / malloc called from outside the
    allocator and the C/C++ runtimes), so a per-message count says where each one comes from."""
    res = collections.Counter()
    for (a, b), n in calls.items():
        aob = fn_ob.get(a) or ""
        if ALLOC.search(b) and not any(x in aob for x in ("jemalloc", "libstdc", "libc", "libfabric")):
            res[a] += n
    return res


def run(build, bench, args, tag):
    os.makedirs(OUT, exist_ok=True)
    cmd = ["valgrind", "--tool=callgrind", "--trace-children=yes", "--dump-before=railcheck::fabric::FabricRail::open*",
           f"--callgrind-out-file={OUT}/{tag}.%p.out", f"{build}/bench/{bench}"] + args
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=open(f"{OUT}/{tag}.stdout", "w"), stderr=open(f"{OUT}/{tag}.stderr", "w"))


def part_file(tag, part):
    # The bench's own process or its forked child: the one with the most parts.
    best = None
    for f in os.listdir(OUT):
        m = re.match(rf"{re.escape(tag)}\.(\d+)\.out\.(\d+)$", f)
        if m and int(m.group(2)) == part:
            best = f
    return os.path.join(OUT, best) if best else None


def diff(quick, full):
    q, f = parse(quick), parse(full)
    self_ = collections.Counter(f[0])
    self_.subtract(q[0])
    fn_ob = dict(q[1])
    fn_ob.update(f[1])
    edges = collections.Counter(f[2])
    edges.subtract(q[2])
    calls = collections.Counter(f[3])
    calls.subtract(q[3])
    return self_, fn_ob, edges, calls


def report(spec, tag, labels):
    for (prov, _), (parts, (nq, nf)) in spec["runs"].items():
        cols = []
        for name, part in zip(labels, parts):
            s, o, e, c = diff(part_file(tag + "q", part), part_file(tag + "f", part))
            n = nf - nq
            cols.append((name, {k: v / n for k, v in attribute(s, o, e).items()},
                         {k: v / n for k, v in counted_calls(c, o).items()}, sum(s.values()) / n,
                         {k: v / n for k, v in alloc_callers(c, o).items()}))
        print(f"\n## {tag} {prov} 64 B: instructions per message (full - quick, {nf - nq} messages)")
        keys = sorted({k for _, b, _, _, _ in cols for k in b}, key=lambda k: -max(b.get(k, 0) for _, b, _, _, _ in cols))
        print("| part | " + " | ".join(n for n, _, _, _, _ in cols) + " |")
        for k in keys:
            print(f"| {k} | " + " | ".join(f"{b.get(k, 0):.0f}" for _, b, _, _, _ in cols) + " |")
        print("| **total** | " + " | ".join(f"{t:.0f}" for _, _, _, t, _ in cols) + " |")
        print("\ncalls per message:")
        keys = sorted({k for _, _, cc, _, _ in cols for k in cc})
        for k in keys:
            print(f"| {k} | " + " | ".join(f"{cc.get(k, 0):.2f}" for _, _, cc, _, _ in cols) + " |")
        print("\nheap allocations per message, by caller (>= 0.01):")
        keys = sorted({k for *_, a in cols for k in a}, key=lambda k: -max(a.get(k, 0) for *_, a in cols))
        for k in keys:
            if max(a.get(k, 0) for *_, a in cols) >= 0.01:
                print(f"| {k[:110]} | " + " | ".join(f"{a.get(k, 0):.2f}" for *_, a in cols) + " |")


def main():
    build = next((a for a in sys.argv[1:] if not a.startswith("--")), "build-plan")
    if "--reuse" not in sys.argv:
        # A fresh run's profiles only: part_file matches by tag and part, whatever the pid.
        shutil.rmtree(OUT, ignore_errors=True)
        for bench, tag in (("fabric_write_imm", "wi"), ("nccl_plugin_overhead", "np")):
            run(build, bench, ["--quick"], tag + "q")
            run(build, bench, [], tag + "f")
    report(WRITE_IMM, "wi", ("plain", "engine"))
    report(PLUGIN, "np", ("bare", "plugin"))


if __name__ == "__main__":
    main()
