#!/usr/bin/env python3
"""Issue 42: per-message timeline of nccl_plugin_overhead's latency phase, from the traces the
temporary timeline patch (timeline.patch) writes: one file per connection pair,
'<ns> <event> <a> <b>' per line. Prints, for the last N messages (one at a time), the median time
from isend to the first occurrence of each event, and the median count of each event per message.
usage: timeline.py BARE_TRACE PLUGIN_TRACE [N]"""
import collections, statistics, sys

EVENTS = [("S.isend", "sender: isend called (its fi_senddata writes the bytes to the socket)"),
          ("S.landed0", "sender: the provider's send completion read (held for the delivery ack)"),
          ("R.landed1", "receiver: the message read from its CQ"),
          ("R.complete", "receiver: its request complete (test() can report done)"),
          ("R.ack_send", "receiver: delivery ack posted (fi_tsend)"),
          ("S.ack_read", "sender: delivery ack read from its CQ"),
          ("S.complete", "sender: its request complete (test() reports done)")]
COUNTS = [("S.nccl_test", "sender: the plugin's test() calls"), ("S.progress", "sender: progress() calls"),
          ("S.test", "sender: result lookups (FabricConnection::finished)"), ("S.cq", "sender: CQ reads (both rails)"),
          ("S.skip", "sender: rail polls skipped as idle (both rails)"), ("R.nccl_test", "receiver: the plugin's test() calls"),
          ("R.progress", "receiver: progress() calls"), ("R.cq", "receiver: CQ reads")]

def per_message(path, last):
    ev = [(int(t), w, int(a)) for t, w, a, _ in (l.split() for l in open(path))]
    starts = [i for i, e in enumerate(ev) if e[1] == "S.isend"][-last:]
    first, count = collections.defaultdict(list), collections.defaultdict(list)
    for k, i in enumerate(starts):
        seg = ev[i:starts[k + 1] if k + 1 < len(starts) else len(ev)]
        seen, c = {}, collections.Counter()
        for t, w, a in seg:
            key = w + str(a) if w.endswith("landed") else w
            seen.setdefault(key, (t - seg[0][0]) / 1000)
            c[w] += 1
        for key, v in seen.items(): first[key].append(v)
        for key, _ in COUNTS: count[key].append(c[key])
    return first, count

def main():
    bare, plug = sys.argv[1], sys.argv[2]
    last = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    (bf, bc), (pf, pc) = per_message(bare, last), per_message(plug, last)
    med = lambda xs: statistics.median(xs) if xs else float("nan")
    print(f"| step (median over the last {last} messages, us after isend) | bare | plugin |")
    print("|---|---:|---:|")
    for key, what in EVENTS: print(f"| {what} | {med(bf[key]):.1f} | {med(pf[key]):.1f} |")
    for key, what in COUNTS: print(f"| {what} per message | {med(bc[key]):.0f} | {med(pc[key]):.0f} |")

main()
