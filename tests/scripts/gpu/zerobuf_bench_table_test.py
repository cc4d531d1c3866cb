#!/usr/bin/env python3
"""scripts/gpu/zerobuf_bench_table.py without a GPU (issue 43): the NCCL kernel names it reads
from NCCL's TUNING lines, the faster of the two NCCL variants per row, and the targets it checks
against that variant, on the committed 2 x H200 run
(docs/data/zerobuf-2gpu/zerobuf_bench_h200x2_ncclsym_2026-11-28.json).

Run: python3 tests/scripts/gpu/zerobuf_bench_table_test.py (CTest: zerobuf_bench_table_*).
"""
import json
import pathlib
import subprocess
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[3]
GPU = ROOT / "scripts" / "gpu"
DATA = ROOT / "docs" / "data" / "zerobuf-2gpu"
RUN = DATA / "zerobuf_bench_h200x2_ncclsym_2026-11-28.json"
sys.path.insert(0, str(GPU))
import zerobuf_bench_table as table  # noqa: E402


class KernelNames(unittest.TestCase):
    def test_tuning_lines_become_short_kernel_names(self):
        self.assertEqual(table.short_kernel("AllReduce [Symmetric]: 8 Bytes -> Kernel AllReduce_AGxLL_R nchannels 1 "
                                            "nthreads 512 nWorks 1"), "AllReduce_AGxLL_R")
        self.assertEqual(table.short_kernel("AllGather: 4 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}"),
                         "RING/LL")
        self.assertEqual(table.short_kernel("no TUNING line (p2p send/recv)"), "p2p")
        self.assertEqual(table.short_kernel(None), "-")

    def test_every_row_of_the_run_names_both_kernels(self):
        rows = json.loads(RUN.read_text())["rows"]
        self.assertEqual(len(rows), 104)
        for r in rows:
            self.assertIn(table.short_kernel(r["nccl_kernel"]), ("RING/LL", "RING/SIMPLE", "p2p"), r)
            sym = table.short_kernel(r["nccl_sym_kernel"])
            if r["op"] == "all_to_all":
                self.assertEqual(sym, "p2p")  # NCCL 2.28 has no symmetric all-to-all
            else:
                self.assertTrue(sym.split("_")[0] in ("AllGather", "ReduceScatter", "AllReduce"), r)


class FasterNccl(unittest.TestCase):
    def test_the_faster_variant_is_picked_per_row(self):
        self.assertEqual(table.best_nccl({"nccl_graph_us": 10.0, "nccl_sym_graph_us": 8.0}), (8.0, "sym"))
        self.assertEqual(table.best_nccl({"nccl_graph_us": 7.0, "nccl_sym_graph_us": 8.0}), (7.0, "nccl"))
        self.assertEqual(table.best_nccl({"nccl_graph_us": 7.0}), (7.0, "nccl"))
        self.assertEqual(table.best_nccl({}), (None, None))

    def test_the_targets_are_checked_against_the_faster_variant(self):
        out = subprocess.run([sys.executable, str(GPU / "zerobuf_bench_table.py"), str(RUN)], check=True,
                             capture_output=True, text=True).stdout
        self.assertIn("worst 0.67 (all_reduce 1 MiB) -> met", out)
        self.assertIn("slowest 4.23 us (32 KiB) -> met", out)
        # all-to-all 256 MiB: 394.0 us against ncclAlltoAll on registered buffers, 391.6 us.
        self.assertIn("worst 1.01 (all_to_all 256 MiB) -> NOT met", out)
        compact = subprocess.run([sys.executable, str(GPU / "zerobuf_bench_table.py"), "--compact", str(RUN)],
                                 check=True, capture_output=True, text=True).stdout
        self.assertIn("3.5 LL / 9.2 s (0.38)", compact)  # 8 B all-reduce: symmetric NCCL was the faster


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + [f"{a}" for a in sys.argv[1:]])
