#!/usr/bin/env python3
"""Read PyTorch Flight Recorder dumps into railcheck's call list (docs/triage.md).

    fr_dump_read.py DUMP...        one JSON document on stdout: {"format": "railcheck-fr-calls", ...}

A dump is what ProcessGroupNCCL's watchdog writes on a timeout (TORCH_FR_DUMP_TEMP_FILE<rank>,
older name TORCH_NCCL_DEBUG_INFO_TEMP_FILE) or what _dump_nccl_trace() returns: a pickle of plain
dicts, lists, tuples, strings and numbers, one file per rank, the rank the file name's last
number. The JSON form (_dump_nccl_trace_json) is read too. Only dump versions 2.x are read (the
layout PyTorch 2.2 through 2.11 writes; checked against 2.10 dumps from PyTorch 2.11).

A pickle can run code when loaded: the unpickler here admits no class or function at all (a
dump needs none), so a pickle that names one is refused before anything runs. Any problem is one
line on stderr, "fr_dump_read: <file>: <what>", and exit 2; never a traceback.
"""
import io
import json
import os
import pickle
import re
import signal
import sys

FORMAT = "railcheck-fr-calls"
FORMAT_VERSION = 1
KNOWN_MAJOR = 2
# The keys every 2.x entry has; anything else in an entry is passed over.
ENTRY_KEYS = ("record_id", "pg_id", "collective_seq_id", "p2p_seq_id", "op_id", "profiling_name",
              "input_sizes", "input_dtypes", "output_sizes", "output_dtypes", "state")
# Dumps of 2.0-2.2 (PyTorch 2.2-2.3) number calls with one "seq_id" and have no p2p numbers.
OLDER_KEYS = {"collective_seq_id": "seq_id"}
P2P_NAME = re.compile(r"^(send|recv) (\d+)(->|<-)(\d+)$")


class BadDump(Exception):
    pass


class PlainUnpickler(pickle.Unpickler):
    """Admits the plain types pickle builds without a global; refuses every class and function."""

    def find_class(self, module, name):
        raise BadDump(f"the pickle names {module}.{name}: a Flight Recorder dump holds only plain "
                      "types, so this is not one (refused without loading it)")

    def persistent_load(self, pid):
        raise BadDump("the pickle refers to a persistent object: not a Flight Recorder dump")


def load(path):
    with open(path, "rb") as f:
        blob = f.read()
    if not blob:
        raise BadDump("empty file")
    if blob[:1] in (b"{", b"[") or blob.lstrip()[:1] == b"{":
        try:
            return json.loads(blob.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise BadDump(f"not valid JSON ({e})")
    if blob[:1] != b"\x80":
        raise BadDump("neither a pickle (protocol 2+) nor JSON: not a Flight Recorder dump")
    try:
        return PlainUnpickler(io.BytesIO(blob)).load()
    except BadDump:
        raise
    except Exception as e:  # truncated or corrupt: pickle raises many kinds
        raise BadDump(f"unreadable pickle ({type(e).__name__}: {e}); truncated?")


def rank_of(path):
    m = re.search(r"(\d+)(\.(json|pkl|pickle))?$", os.path.basename(path))
    if not m:
        raise BadDump("no rank in the file name: name it <prefix><rank> as the watchdog does (rank_0, rank_1, ...)")
    return int(m.group(1))


def check_version(d):
    v = d.get("version")
    if not isinstance(v, str) or not re.fullmatch(r"\d+\.\d+", v):
        raise BadDump(f"no dump version (got {v!r}): not a Flight Recorder dump")
    if int(v.split(".")[0]) != KNOWN_MAJOR:
        raise BadDump(f"dump version {v} is not one this reader knows ({KNOWN_MAJOR}.x)")
    return v


def call_site(frames):
    """The innermost frame outside PyTorch and the standard library: the user's call."""
    for fr in frames or []:
        fn = str(fr.get("filename", ""))
        if "/torch/" in fn or "/lib/python3" in fn and "site-packages" not in fn or fn.startswith("<"):
            continue
        return {"file": fn, "line": int(fr.get("line", 0)), "func": str(fr.get("name", ""))}
    return None


def sizes(v, key):
    if not isinstance(v, list) or not all(isinstance(t, list) and all(isinstance(n, int) for n in t) for t in v):
        raise BadDump(f"entry field {key} is not a list of shapes")
    return v


def entry(e, i):
    if not isinstance(e, dict):
        raise BadDump(f"entry {i} is not a dict")
    e = dict(e)
    for key, older in OLDER_KEYS.items():
        if key not in e and older in e:
            e[key] = e[older]
    e.setdefault("p2p_seq_id", 0)
    missing = [k for k in ENTRY_KEYS if k not in e]
    if missing:
        raise BadDump(f"entry {i} lacks {', '.join(missing)}")
    name = str(e["profiling_name"])
    op = name.split(":", 1)[1] if ":" in name else name
    # The group is named by process_group[0], the key of pg_config; pg_id is a per-process
    # counter (a rank's second group is 1 whatever its name) and names groups only where no
    # process_group is recorded.
    group = e.get("process_group")
    pg = str(group[0]) if isinstance(group, (list, tuple)) and group else str(e["pg_id"])
    out = {
        "record_id": int(e["record_id"]),
        "pg": pg,
        "coll_seq": int(e["collective_seq_id"]),
        "p2p_seq": int(e["p2p_seq_id"]),
        "op_id": int(e["op_id"]),
        "op": op,
        "is_p2p": bool(e.get("is_p2p", False)),
        "in_sizes": sizes(e["input_sizes"], "input_sizes"),
        "in_dtypes": [str(t) for t in e["input_dtypes"]],
        "out_sizes": sizes(e["output_sizes"], "output_sizes"),
        "out_dtypes": [str(t) for t in e["output_dtypes"]],
        "state": str(e["state"]),
    }
    m = P2P_NAME.match(op)
    if m:
        out["op"] = m.group(1)
        out["self"] = int(m.group(2))
        out["peer"] = int(m.group(4))
        out["is_p2p"] = True
    site = call_site(e.get("frames"))
    if site:
        out["call_site"] = site
    return out


def pg_ranks(text):
    try:
        ranks = json.loads(text) if isinstance(text, str) else list(text)
    except json.JSONDecodeError:
        raise BadDump(f"process group ranks {text!r} are not a list")
    if not all(isinstance(r, int) for r in ranks):
        raise BadDump(f"process group ranks {text!r} are not integers")
    return ranks


def read(path):
    d = load(path)
    if not isinstance(d, dict):
        raise BadDump(f"the dump is a {type(d).__name__}, not a dict: not a Flight Recorder dump")
    version = check_version(d)
    if not isinstance(d.get("entries", []), list) or not isinstance(d.get("pg_config", {}), dict):
        raise BadDump("entries or pg_config has the wrong type")
    pgs = []
    for pid, cfg in sorted(d.get("pg_config", {}).items()):
        if not isinstance(cfg, dict):
            raise BadDump(f"pg_config[{pid!r}] is not a dict")
        pgs.append({"id": str(pid), "desc": str(cfg.get("desc", "")), "ranks": pg_ranks(cfg.get("ranks", "[]"))})
    status = {}
    for pid, st in (d.get("pg_status") or {}).items():
        if isinstance(st, dict):
            status[str(pid)] = {k: int(v) for k, v in st.items() if isinstance(v, int)}
    entries = [entry(e, i) for i, e in enumerate(d.get("entries", []))]
    # The ring buffer is dumped oldest first except where it wrapped: order by record id.
    entries.sort(key=lambda e: e["record_id"])
    return {"source": path, "rank": rank_of(path), "dump_version": version,
            "comm_lib_version": str(d.get("comm_lib_version", "")), "pgs": pgs, "pg_status": status,
            "entries": entries}


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # a reader that stops reading ends us quietly
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    dumps = []
    for path in argv:
        try:
            dumps.append(read(path))
        except BadDump as e:
            print(f"fr_dump_read: {path}: {e}", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"fr_dump_read: {path}: {e.strerror}", file=sys.stderr)
            return 2
        except (TypeError, ValueError, AttributeError) as e:
            print(f"fr_dump_read: {path}: a field has the wrong type ({e})", file=sys.stderr)
            return 2
    json.dump({"format": FORMAT, "format_version": FORMAT_VERSION, "dumps": dumps}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
