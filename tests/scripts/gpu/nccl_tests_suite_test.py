#!/usr/bin/env python3
"""scripts/gpu/nccl_tests_suite.sh without a GPU: its reader of nccl-tests' output on hand-written
samples (tests/data/nccl-tests/, in the format of nccl-tests 2.19.6 src/util.cu), the log checks
it shares with nccl_plugin_conformance.sh, and the whole script in a fake world (nvidia-smi, nvcc,
NCCL and nccl-tests' *_perf stand-ins) where one alltoall run crashes with SIGSEGV, and issue 42's
like-for-like table of the suite's JSON (plugin_tcp_table.py).

Run: python3 tests/scripts/gpu/nccl_tests_suite_test.py (CTest: nccl_tests_suite_*).
"""
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[3]
GPU = ROOT / "scripts" / "gpu"
DATA = ROOT / "tests" / "data" / "nccl-tests"
sys.path.insert(0, str(GPU))
import nccl_tests_table as table  # noqa: E402


def sample(name):
    return (DATA / name).read_text()


class ReadsNcclTestsOutput(unittest.TestCase):
    def test_a_clean_run_gives_every_row_its_busbw_and_no_wrong_value(self):
        p = table.parse_output(sample("sendrecv_fault_tcp.out"))
        self.assertEqual([r["bytes"] for r in p["rows"]], [8 * 8**i for i in range(8)])
        self.assertEqual(p["rows"][-1]["out_of_place"]["busbw"], 0.76)
        self.assertEqual(p["rows"][6]["in_place"]["time_us"], 2839.72)
        self.assertEqual(table.wrong_values(p), 0)
        self.assertEqual((p["out_of_bounds"], p["out_of_bounds_ok"], p["avg_busbw"]), (0, True, 0.314499))
        self.assertEqual((p["nccl_tests"], p["nccl_library"]), ("2.19.6", 22809))
        self.assertEqual(p["devices"], ["NVIDIA H200", "NVIDIA H200"])
        self.assertEqual(table.verdict(0, False, p, [], [], expect_rows=8), ("pass", ""))

    def test_a_test_without_a_reduction_has_no_redop_column_and_its_rows_still_read(self):
        # hypercube_perf prints its redop as an empty field (2026-11-26, 2xH200, recorded output).
        p = table.parse_output(sample("hypercube_plugin_shm.out"))
        # It asks for 8 B .. 64 MiB and prints 0 B (8 B rounded to whole elements) .. 16 MiB.
        self.assertEqual([r["bytes"] for r in p["rows"]], [0] + [8 * 8**i for i in range(1, 8)])
        self.assertTrue(all(r["redop"] == "" and r["root"] == "-1" for r in p["rows"]))
        self.assertEqual(table.wrong_values(p), 0)
        self.assertEqual(table.verdict(0, False, p, [], [], expect_rows=9), ("pass", ""))
        self.assertEqual(table.verdict(0, False, p, [], [], expect_rows=7)[0], "error")

    def test_wrong_values_are_summed_from_both_halves_and_fail_the_run(self):
        p = table.parse_output(sample("all_reduce_wrong.out"))
        # 131072 and 4194304 wrong elements; %6g prints the second as 4.1943e+06.
        self.assertEqual(table.wrong_values(p), 131072 + 4194300)
        self.assertEqual((p["out_of_bounds"], p["out_of_bounds_ok"]), (2, False))
        status, why = table.verdict(1, False, p, [], [], expect_rows=8)
        self.assertEqual(status, "wrong")
        self.assertIn("4325372 wrong values", why)

    def test_a_crash_is_told_from_its_signal_and_stderr_and_the_cut_row_is_not_read(self):
        p = table.parse_output(sample("alltoall_crash.out"))
        self.assertEqual((len(p["rows"]), p["unparsed_rows"], p["out_of_bounds"]), (4, 1, None))
        crashes = table.crash_lines([sample("alltoall_crash.err")])
        self.assertTrue(crashes[0].startswith("SEGV_REPORT pid 48377"))
        status, why = table.verdict(139, False, p, crashes, [], expect_rows=8)
        self.assertEqual(status, "crash")
        self.assertTrue(why.startswith("SIGSEGV, exit 139: SEGV_REPORT"), why)
        # glibc's heap check aborts instead: still a crash, named by its message.
        glibc = table.crash_lines(["corrupted size vs. prev_size in fastbins"])
        self.assertEqual(table.verdict(134, False, p, glibc, [], 8)[0], "crash")

    def test_a_run_missing_rows_or_a_log_check_fails(self):
        p = table.parse_output(sample("sendrecv_fault_tcp.out"))
        # More rows than -b..-e asks for, or none at all, is not this run's output.
        self.assertEqual(table.verdict(0, False, p, [], [], expect_rows=7)[0], "error")
        self.assertEqual(table.verdict(0, False, dict(p, rows=[]), [], [], expect_rows=8)[0], "error")
        missing = ["NCCL's log does not show a completed failover (no line matching 'failover [0-9]+ done')"]
        self.assertEqual(table.verdict(0, False, p, [], missing, 8), ("log-check", missing[0]))
        self.assertEqual(table.verdict(124, True, p, [], [], 8)[0], "timeout")


class SharedLogChecks(unittest.TestCase):
    """lib_nccl_plugin.sh, as both GPU scripts source it."""

    def check(self, log_text, *kinds):
        with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
            f.write(log_text)
            f.flush()
            r = subprocess.run(["bash", "-c", 'source "$1"; shift; nccl_plugin_check_log "$@"; echo "rc=$?";'
                                'nccl_plugin_failovers_done "$1"', "test", str(GPU / "lib_nccl_plugin.sh"),
                                f.name, *kinds], capture_output=True, text=True, check=True)
        return r.stdout.splitlines()

    def test_a_fault_run_must_show_the_fault_and_a_completed_failover(self):
        log = ("h:1:2 [0] NCCL INFO NET/Plugin: Loaded net plugin railcheck (v11)\n"
               "h:1:2 [0] NCCL INFO Using network railcheck\n"
               "h:1:2 [0] NCCL INFO NET/railcheck railcheck0: pciPath none (virtual NIC)\n"
               "h:1:9 [0] NCCL INFO NET/railcheck send comm #3: fault injected: cutting the primary rail\n")
        self.assertEqual(self.check(log, "plugin", "failover"),
                         ["NCCL's log does not show a completed failover (no line matching 'failover [0-9]+ done')",
                          "rc=1", "0"])
        done = log + "h:1:9 [0] NCCL INFO NET/railcheck send comm #3: failover 1 done: now on rail 1\n" * 2
        self.assertEqual(self.check(done, "plugin", "failover"), ["rc=0", "2"])

    def test_a_socket_run_must_show_the_socket_transport(self):
        self.assertEqual(self.check("h:1:2 [0] NCCL INFO Using network Socket\n", "socket"), ["rc=0", "0"])
        self.assertEqual(self.check("h:1:2 [0] NCCL INFO Using network railcheck\n", "socket")[1], "rc=1")


# A stand-in for nccl-tests' <op>_perf: prints rows in src/util.cu's format, writes NCCL's INFO
# lines to NCCL_DEBUG_FILE for the transport the environment selects, and, on the second alltoall
# run with the fault on tcp, dies of SIGSEGV after two rows, as issue 33's crash did.
FAKE_PERF = r'''#!/usr/bin/env python3
import os, signal, socket, sys
op = os.path.basename(sys.argv[0])[:-len("_perf")]
a = dict(zip(sys.argv[1::2], sys.argv[2::2]))
assert a["-c"] == "1" and a["-g"] == "2", sys.argv
env = os.environ
assert env["NCCL_P2P_DISABLE"] == "1" and env["NCCL_SHM_DISABLE"] == "1" and env["NCCL_NVLS_ENABLE"] == "0"
plugin = env.get("NCCL_NET_PLUGIN") == "railcheck"
fault, provider = env.get("RAILCHECK_NCCL_FAULT"), env.get("HA_NCCL_PROVIDER")
assert plugin != (env.get("NCCL_NET") == "Socket") and (fault is None or plugin)
log = open(env["NCCL_DEBUG_FILE"].replace("%h", socket.gethostname()).replace("%p", str(os.getpid())), "w")
if plugin:
    log.write("h:1:2 [0] NCCL INFO NET/Plugin: Loaded net plugin railcheck (v11)\nh:1:2 [0] NCCL INFO Using network railcheck\n"
              f"h:1:2 [0] NCCL INFO NET/railcheck railcheck0: provider {provider}\n")
else:
    log.write("h:1:2 [0] NCCL INFO Using network Socket\n")
if fault:
    log.write(f"h:1:9 [0] NCCL INFO NET/railcheck send comm #0: fault injected ({fault})\n"
              "h:1:9 [0] NCCL INFO NET/railcheck send comm #0: failover 1 done: now on rail 1\n"
              "h:1:9 [1] NCCL INFO NET/railcheck recv comm #0: failover 1 done: now on rail 1\n")
log.flush()
counter = os.path.join(os.path.dirname(sys.argv[0]), op + ".runs." + str(provider) + str(bool(fault)))
runs = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(runs))
crash = op == "alltoall" and fault and provider == "tcp;ofi_rxm" and runs == 2
print("# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809")
print("#  Rank  0 Group  0 Pid  %6d on       fake device  0 [0000:18:00] Fake GPU" % os.getpid())
nbytes = lambda x: int(x.rstrip("KMG")) << {"K": 10, "M": 20, "G": 30}.get(x[-1], 0)
size, n = nbytes(a["-b"]), 0
while size <= nbytes(a["-e"]):
    if crash and n == 2:
        sys.stdout.flush()
        print("corrupted size vs. prev_size in fastbins", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    bw = (2.0 if plugin else 1.0) * (n + 1)
    print("%12li  %12li  %8s  %6s  %6s" % (size, size // 4, "float", "sum", "%6i" % -1)
          + "  %7s  %6s  %6s  %6g" % ("10.00", "%6.2f" % bw, "%6.2f" % bw, 0) * 2)
    size, n = size * int(a["-f"]), n + 1
print("# %-20s : %d %s" % ("Out of bounds values", 0, "OK"))
print("# %-20s : %g %s" % ("Avg bus bandwidth", (2.0 if plugin else 1.0) * (n + 1) / 2, ""))
'''


class SuiteInAFakeWorld(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="nccl-tests-suite-"))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def executable(self, path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    def test_a_crash_fails_its_run_the_suite_goes_on_and_the_table_counts_it(self):
        t = self.tmp
        self.executable(t / "bin" / "nvidia-smi",
                        '#!/bin/sh\ncase "$1" in -L) printf "GPU 0: Fake\\nGPU 1: Fake\\n" ;; *) echo "Fake GPU, 0.0" ;; esac\n')
        self.executable(t / "cuda" / "bin" / "nvcc", "#!/bin/sh\nexit 0\n")
        (t / "nccl" / "include").mkdir(parents=True)
        (t / "nccl" / "include" / "nccl.h").write_text("")
        (t / "nccl" / "lib").mkdir()
        (t / "nccl" / "lib" / "libnccl.so.2").write_text("")
        src = t / "nccl-tests"
        (src / "src").mkdir(parents=True)
        (src / "src" / "common.cu").write_text("")
        (src / "src" / "common.h").write_text('#define NCCL_TESTS_VERSION "2.19.6"\n')
        self.executable(src / "fake_perf", FAKE_PERF)
        (src / "Makefile").write_text(  # asserts the suite's make variables, then "builds"
            "all:\n\ttest $(MPI) = 0 && test -f $(NCCL_HOME)/lib/libnccl.so && test -f $(NCCL_HOME)/include/nccl.h\n"
            "\ttest '$(NVCC_GENCODE)' = '-gencode=arch=compute_90,code=sm_90' && test -x $(CUDA_HOME)/bin/nvcc\n"
            "\tmkdir -p $(BUILDDIR) && for op in sendrecv alltoall; do cp fake_perf $(BUILDDIR)/$${op}_perf; done\n")
        plugin = t / "plugin" / "libnccl-net-railcheck.so"  # any file ldd reads
        plugin.parent.mkdir()
        shutil.copy("/bin/true", plugin)
        env = dict(os.environ, PATH=f"{t / 'bin'}:{os.environ['PATH']}", NCCL_TESTS_DIR=str(src),
                   CUDA_HOME=str(t / "cuda"), NCCL_HOME=str(t / "nccl"), MPI="0", BUILD_DIR=str(t / "build"),
                   OUT=str(t / "out"), RAILCHECK_NCCL_PLUGIN_SO=str(plugin), RAILCHECK_HWLIBS=str(t / "hwlibs"),
                   CONFIGS="plugin-tcp fault-tcp socket", REPEAT="2", MAX_BYTES="32K", RUN_TIMEOUT="20",
                   TCP_PROVIDER="rxm")  # tcp;ofi_rxm's short name: the fake crashes only on tcp;ofi_rxm
        env.pop("CUDA_VISIBLE_DEVICES", None)
        r = subprocess.run([str(GPU / "nccl_tests_suite.sh")], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("[8/12] alltoall fault-tcp one-process rep 2: crash: SIGSEGV", r.stderr)
        self.assertIn("[9/12] alltoall socket one-process rep 2: pass", r.stderr)

        doc = json.loads((t / "out" / "nccl_tests.json").read_text())
        self.assertEqual(len(doc["runs"]), 12)
        failed = [x for x in doc["runs"] if x["status"] != "pass"]
        self.assertEqual([(x["op"], x["config"], x["rep"], x["status"]) for x in failed],
                         [("alltoall", "fault-tcp", 2, "crash")])
        self.assertIn("corrupted size vs. prev_size in fastbins", failed[0]["tail"]["crash_lines"])
        # MIN 8, MAX 32K, factor 8: rows 8 .. 32768; warmup at 13 powers of two; 2 x (1 + 20 + 1) per row.
        self.assertEqual(doc["machine"]["fault"], f"cut-primary-after-msgs={(13 * 5 + 5 * 2 * 22) // 2}")
        summary = {(s["op"], s["config"]): s for s in doc["summary"]}
        self.assertEqual(summary[("sendrecv", "fault-tcp")]["failovers_done"], [2, 2])
        self.assertEqual(summary[("sendrecv", "plugin-tcp")]["busbw_vs_socket"], 2.0)

        text = (t / "out" / "table.txt").read_text()
        self.assertIn("| alltoall | fault-tcp | one-process | FAIL 1/2 (crash 1) |", text)
        self.assertIn("| sendrecv | plugin-tcp | one-process | pass 2/2 | 0 | 0 | 6.00 | 2.00x |", text)
        self.assertIn("SEGV_REPORT", (t / "out" / "failures.txt").read_text())  # segv_report.c preloaded
        self.assertLessEqual(len(list((t / "out").iterdir())), 8)


class PluginTcpTable(unittest.TestCase):
    """scripts/gpu/plugin_tcp_table.py: issue 42's like-for-like rows from the suite's JSON."""

    def run_table(self, after, before=None, extra=None):
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="plugin-tcp-table-"))
        self.addCleanup(shutil.rmtree, tmp)
        (tmp / "after.json").write_text(json.dumps({"runs": after}))
        args = [sys.executable, str(GPU / "plugin_tcp_table.py"), "--json", str(tmp / "out.json")]
        if before is not None:
            (tmp / "before.json").write_text(json.dumps({"runs": before}))
            args += ["--before", str(tmp / "before.json")]
        for name, (config, runs) in (extra or {}).items():
            (tmp / f"{name}.json").write_text(json.dumps({"runs": runs}))
            args += ["--extra", f"{name}={config}:{tmp / f'{name}.json'}"]
        r = subprocess.run(args + [str(tmp / "after.json")], capture_output=True, text=True)
        return r.returncode, json.loads((tmp / "out.json").read_text())["rows"], r.stdout

    @staticmethod
    def record(op, config, times, status="pass"):
        rows = [{"bytes": b, "time_us_oop": t} for b, t in times.items()]
        return {"op": op, "config": config, "mode": "one-process", "rep": 1, "status": status, "rows": rows}

    def test_each_column_is_the_median_of_the_passing_runs_and_a_failed_run_marks_its_op(self):
        after = [self.record("sendrecv", "plugin-tcp", {8: t}) for t in (30.0, 10.0, 20.0)]
        after += [self.record("sendrecv", "socket", {8: 25.0}), self.record("sendrecv", "fault-tcp", {8: 22.0})]
        after += [self.record("all_reduce", "socket", {8: 40.0}), self.record("all_reduce", "plugin-tcp", {}, "crash")]
        after += [self.record("sendrecv", "plugin-tcp", {8: 1.0}, "wrong")]  # not counted in the median
        rc, rows, text = self.run_table(after, before=[self.record("sendrecv", "plugin-tcp", {8: 400.0})])
        self.assertEqual(rc, 1)  # the crashed all_reduce run
        by = {(r["test"], r["bytes"]): r for r in rows}
        s = by[("sendrecv", 8)]
        self.assertEqual((s["plugin_us"], s["socket_us"], s["fault_us"], s["plugin_before_us"]), (20.0, 25.0, 22.0, 400.0))
        self.assertEqual(s["runs"]["plugin_us"], 3)
        self.assertFalse(s["correct"])  # the wrong sendrecv run
        self.assertFalse(by[("all_reduce", 8)]["correct"])
        self.assertIn("| sendrecv | 8 | 25.0 | 20.0 | 0.80 | 22.0 | 1.10 | 400.0 | NO |", text)

    def test_every_run_passing_exits_0(self):
        rc, rows, _ = self.run_table([self.record("alltoall", "plugin-tcp", {64: 5.0}), self.record("alltoall", "socket", {64: 6.0})])
        self.assertEqual(rc, 0)
        self.assertEqual(rows, [{"test": "alltoall", "bytes": 64, "plugin_us": 5.0, "socket_us": 6.0,
                                 "runs": {"plugin_us": 1, "socket_us": 1}, "correct": True}])

    def test_an_extra_file_gives_its_config_a_column_of_its_own(self):
        after = [self.record("sendrecv", "plugin-tcp", {8: 10.0}), self.record("sendrecv", "plugin-shm", {8: 4.0})]
        stage_off = [self.record("sendrecv", "plugin-tcp", {8: t}) for t in (40.0, 30.0, 50.0)]
        stage_off += [self.record("sendrecv", "socket", {8: 99.0})]  # another config of that file: not read
        rc, rows, text = self.run_table(after, extra={"stage_off": ("plugin-tcp", stage_off)})
        self.assertEqual(rc, 0)
        self.assertEqual((rows[0]["plugin_us"], rows[0]["shm_us"], rows[0]["stage_off_us"]), (10.0, 4.0, 40.0))
        self.assertNotIn("socket_us", rows[0])
        self.assertIn("| shm us | stage off us | correct |", text)
        self.assertIn("| sendrecv | 8 | - | 10.0 | - | - | - | 4.0 | 40.0 | yes |", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
