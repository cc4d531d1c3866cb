// railcheck: one binary, one subcommand per job.
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "backends/validate/validate_scenario.hpp"
#include "cli/allocator.hpp"
#include "cli/commands.hpp"
#include "swarm/swarm_pool.hpp"

namespace {

using railcheck::cli::kExitBadInput;
using railcheck::cli::kExitInternal;

// A fatal signal is an internal error, never a verdict: one line and exit 70. This replaces the
// handler that libinfinipath (loaded through libfabric's psm provider) installs before main,
// which exits 1 -- the violation code -- and leaves a "<exe>.80s-<pid>,<host>.btr" file in the
// working directory. Only async-signal-safe calls here.
extern "C" void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV   ? "SIGSEGV"
                     : sig == SIGBUS  ? "SIGBUS"
                     : sig == SIGFPE  ? "SIGFPE"
                     : sig == SIGILL  ? "SIGILL"
                     : sig == SIGABRT ? "SIGABRT"
                                      : "a fatal signal";
  const char* a = "railcheck: internal error: ";
  const char* b = "; please report it with the command line (exit 70)\n";
  [[maybe_unused]] auto r1 = ::write(2, a, std::strlen(a));
  [[maybe_unused]] auto r2 = ::write(2, name, std::strlen(name));
  [[maybe_unused]] auto r3 = ::write(2, b, std::strlen(b));
  ::_exit(kExitInternal);
}

void install_fatal_signal_handlers() {
  // Children (sweep points, the conform peer) and any later psm initialisation see this too.
  ::setenv("IPATH_NO_BACKTRACE", "1", 1);
  // Its own stack, so that a stack overflow (deep recursion on a hostile input) still reports.
  // Never freed: it stays installed until the process ends, and a signal can come while static
  // objects are destroyed (LeakSanitizer aborts from there); a static vector was freed first.
  const std::size_t alt_size = std::max<std::size_t>(SIGSTKSZ, 64 * 1024);
  static char* const alt = new char[alt_size];
  stack_t ss{};
  ss.ss_sp = alt;
  ss.ss_size = alt_size;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &sa, nullptr);
  std::set_terminate([] {
    // An exception escaping a thread: name it on one line before exiting 70.
    if (auto e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        fmt::print(stderr, "railcheck: internal error: uncaught {}\n", x.what());
      } catch (...) {
        fmt::print(stderr, "railcheck: internal error: uncaught exception\n");
      }
    } else {
      fmt::print(stderr, "railcheck: internal error: std::terminate\n");
    }
    std::_Exit(kExitInternal);
  });
}

// CLI11's messages may span lines; the contract is one line.
std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// Every number railcheck takes is a count, a size or a seed: a leading minus sign is refused
// here, since CLI11 would turn "-1" into 2^64-1 for an unsigned option.
const CLI::Validator kNotNegative(
    [](const std::string& v) -> std::string {
      std::size_t i = 0;
      while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
      if (i < v.size() && v[i] == '-' && v.size() > i + 1) return "must not be negative, got " + v;
      return {};
    },
    "", "not negative");

// A wall-time bound: a finite number of seconds in (0, 1e9]. CLI::Range alone lets "nan" through,
// since every comparison with NaN is false.
const CLI::Validator kSeconds(
    [](const std::string& v) -> std::string {
      double d = 0;
      try {
        std::size_t used = 0;
        d = std::stod(v, &used);
        if (used != v.size()) return "must be a number of seconds, got " + v;
      } catch (const std::exception&) {
        return "must be a number of seconds, got " + v;
      }
      if (!std::isfinite(d) || d <= 0 || d > 1e9) return "must be a finite number of seconds in (0, 1e9], got " + v;
      return {};
    },
    "SECONDS", "seconds");

int dispatch(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  install_fatal_signal_handlers();
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "railcheck: out of memory: the input asks for more than this machine can hold\n");
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "railcheck: internal error: {}\n", one_line(e.what()));
    return kExitInternal;
  } catch (...) {
    fmt::print(stderr, "railcheck: internal error: unknown exception\n");
    return kExitInternal;
  }
}

namespace {

int dispatch(int argc, char** argv) {
  CLI::App app{
      "railcheck: a discrete-event simulator and verification harness for RDMA/NCCL protocols.\n"
      "One protocol engine (handshake, HA failover with WR replay, ...) driven by SimGrid, a model\n"
      "checker and real hardware."};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ran clean, 1 violation found, 2 bad input (one line naming the file, line and key), "
      "3 inconclusive (a search limit was hit; replay-sched: the inputs cannot settle the verdict), 70 internal error "
      "(a railcheck bug: an uncaught exception or a "
      "fatal signal), 77 skipped (conform: no device or no namespaces).");
  app.set_version_flag("--version", fmt::format("railcheck 0.1.0 (allocator: {})", railcheck::cli::allocator_name()));

  railcheck::cli::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "Run one scenario on the SimGrid driver and print what happened");
  run_cmd->add_option("scenario", run.scenario, "Scenario file (TOML), e.g. scenarios/primary-dies.toml")
      ->required()
      ->check(CLI::ExistingFile);
  run_cmd->add_option("--seed", run.seed, "Seed for every random choice (default: the scenario's seed)");
  run_cmd->add_option("--json", run.json_path, "Also write the summary as JSON to this file ('-' for stdout)");
  run_cmd->add_option("--policy", run.policy, "Override the replay policy: naive, probe or resync");
  run_cmd->add_flag("--events", run.print_events, "Print every engine trace note with its time");
  run_cmd->add_option("--trace", run.trace_path, "Write a timeline (Chrome/Perfetto trace-event JSON) to this file");
  // Off by default: the progress actor is extra simulated activity, and a run must be the same
  // whether or not someone watches it.
  run_cmd->add_flag("--progress", run.progress, "Report progress on stderr every 2 s of wall time (long runs)");

  railcheck::cli::SwarmOptions swarm;
  auto* swarm_cmd = app.add_subcommand(
      "swarm",
      "Seeded simulation testing: random worlds and compound faults, invariants on every event (docs/swarm.md)");
  swarm_cmd->footer(
      "Several machines: started by mpirun (mpirun -np N --host a,b railcheck swarm --seeds ...), rank r of N "
      "runs seeds first + r + k*N on its own -j workers; rank 0 prints every rank's FINDING lines and one summary "
      "of them all, and every rank exits 1 if any found something (docs/swarm.md, Campaign).");
  swarm_cmd->add_option("--seeds", swarm.seeds,
                        "Seeds to run (default: 1000, or as many as --for allows); under mpirun, over all the ranks");
  swarm_cmd->add_option("--for", swarm.seconds, "Run for this many wall-clock seconds (no seed starts later)");
  swarm_cmd->add_option("--first-seed", swarm.first_seed, "First seed (default: a fresh one, printed)");
  swarm_cmd->add_option("-j,--jobs", swarm.jobs,
                        "Worker processes (default: every local core; under mpirun, each rank's share of its node's)");
  swarm_cmd
      ->add_option("--seeds-per-process", swarm.seeds_per_process,
                   fmt::format("Seeds a worker process runs before a fresh one takes over (default: {}; "
                               "docs/swarm.md, Throughput)",
                               railcheck::swarm::kSeedsPerProcess))
      ->check(CLI::PositiveNumber);
  swarm_cmd->add_option("--seed", swarm.seed, "Replay this one seed and print its world and verdict");
  swarm_cmd->add_option("--shrink", swarm.shrink, "Shrink this failing seed to a small scenario file");
  swarm_cmd->add_option("--out", swarm.out,
                        "Scenario file that --shrink (or --seed) writes (default: swarm-SEED.toml)");
  swarm_cmd->add_option("--policy", swarm.policy, "Force a replay policy: naive, probe or resync (default: drawn)");
  swarm_cmd->add_option("--mutation", swarm.mutation,
                        "Run a deliberately broken engine, e.g. replay-drops-first (a wrong name lists them)");
  swarm_cmd->add_option("--max-ranks", swarm.max_ranks, "Largest world drawn (2..1024)")->check(CLI::Range(2, 1024));
  swarm_cmd->add_option("--shrink-runs", swarm.shrink_runs, "Most worlds --shrink tries");

  auto* tun_cmd =
      app.add_subcommand("tunables", "List the engine's tunables with defaults, ranges and HA_NCCL_* names");
  bool tun_markdown = false;
  tun_cmd->add_flag("--markdown", tun_markdown, "Print docs/scenarios.md's [engine] table rows instead");

  railcheck::cli::CheckOptions check;
  auto* check_cmd = app.add_subcommand("check",
                                       "Model-check a world (failover, plan-channels, plan-lifecycle, imm): everything "
                                       "within a bound (exit 1: violation)");
  check_cmd->add_option("file", check.file, "Model file (verify/models/*.toml) or scenario file");
  check_cmd->add_option("--mode", check.mode,
                        "dfs (exhaustive), bfs (shortest counterexample), random (walks) or pdfs (exhaustive on "
                        "--threads threads with the dfs's memory; its counterexample is a real run, not the shortest)");
  check_cmd->add_option(
      "--policy", check.policy,
      "Override the model's policy: naive, probe or resync (failover, imm); nccl, passsm or p2p_first (plan-channels)");
  check_cmd->add_option("--max-states", check.max_states, "Stop after this many distinct states (exit 3)");
  check_cmd->add_option("--max-depth", check.max_depth, "Longest path explored, in steps");
  check_cmd->add_option("--walks", check.walks, "Random mode: number of walks");
  check_cmd->add_option("--max-seconds", check.max_seconds, "Stop after this much wall time, in any mode (exit 3)")
      ->check(kSeconds);
  check_cmd->add_option("--seed", check.seed, "Random mode: seed of the walks");
  check_cmd->add_option(
      "--threads", check.threads,
      "Threads of a bfs or pdfs search (default 1). bfs: the verdict, counts and counterexample do not depend on "
      "it. pdfs: the verdict does not, nor the counts of an exhausted run with --symmetry off (docs/verify.md)");
  check_cmd->add_option("--symmetry", check.symmetry,
                        "on (default) or off: failover world, merge states equal up to swapping the two connections "
                        "or renaming fresh ids (docs/verify.md); the verdict does not depend on it");
  check_cmd->add_option("--trace", check.trace_path,
                        "Where to write a counterexample (default counterexample.trace.json)");
  check_cmd->add_option("--json", check.json_path, "Also write the result as JSON to this file ('-' for stdout)");
  check_cmd->add_flag("--list-invariants", check.list_invariants, "List the invariants and exit");
  check_cmd->add_flag("--progress", check.progress, "Report progress on stderr while exploring");

  railcheck::cli::ReplayOptions replay;
  auto* replay_cmd = app.add_subcommand("replay", "Re-execute a counterexample trace through the engine, step by step");
  replay_cmd->add_option("trace", replay.trace, "Trace file written by `railcheck check`")
      ->required()
      ->check(CLI::ExistingFile);
  replay_cmd->add_option("--policy", replay.policy,
                         "Replay the same steps under another policy (naive, probe, resync)");
  replay_cmd->add_option("--sim-scenario", replay.sim_scenario,
                         "Write the trace's rail deaths/repairs as a timed-fault scenario to this file");
  replay_cmd->add_flag("--sim", replay.sim, "Also run those timed faults on the SimGrid driver (railcheck run)");

  railcheck::cli::RouteOptions route;
  auto* route_cmd = app.add_subcommand("route", "Routing tables: RL weight transfer and MoE dispatch/combine");
  route_cmd->require_subcommand(1);
  auto* weights_cmd = route_cmd->add_subcommand(
      "weights", "Build the trainer -> rollout weight-transfer table from a spec and time it on SimGrid");
  auto* moe_cmd =
      route_cmd->add_subcommand("moe", "Build flat and hierarchical MoE dispatch/combine tables and time them");
  for (auto* c : {weights_cmd, moe_cmd}) {
    c->add_option("spec", route.spec, "Spec file (TOML), e.g. scenarios/routing/qwen3-235b-128-to-32.toml")->required();
    c->add_option("--json", route.json_path, "Also write the summary as JSON to this file ('-' for stdout)");
  }
  weights_cmd->add_flag("--table-only", route.table_only, "Build and summarize the table; skip the simulation");
  weights_cmd->add_option("--trainer", route.trainer_rank, "Print this trainer rank's routing table");
  weights_cmd
      ->add_option("--write-queues", route.write_queues,
                   "How writes share the fabric, overriding the spec: per-peer (one queue pair per trainer-rollout "
                   "pair, writes in order) or per-write (every write its own flow, the model before 2026-11-25)")
      ->check(CLI::IsMember({"per-peer", "per-write"}));
  weights_cmd->add_flag("--progress", route.progress,
                        "Report the simulated time and the writes landed on stderr every 2 s of wall time");
  weights_cmd->add_option("--timeline", route.timeline_path,
                          "Write per-trainer-GPU stage seconds and per-NIC bytes in 5 ms bins as JSON to this file "
                          "(reports/routing_timeline.py plots it)");
  moe_cmd->add_option("--rank", route.moe_rank, "Print this rank's dispatch send table");
  moe_cmd->add_option("--seed", route.seed, "Seed of the token-to-expert draw (default: the spec's)");
  moe_cmd->add_flag("--simgrid", route.simgrid,
                    "Time the phases on SimGrid's engine with network/optim:Full, a cross-check of the default fluid "
                    "solver (SimGrid's CM02 sharing without its engine): the same figures to a few parts per million, "
                    "a minute at EP 256 where the default takes seconds (docs/routing.md)");

  railcheck::cli::TriageOptions triage;
  auto* triage_cmd = app.add_subcommand(
      "triage",
      "One verdict for a hang from the ranks' PyTorch Flight Recorder dumps: a call mismatch, an NCCL-level hang, "
      "or below NCCL (exit 1), or no problem found (exit 0)");
  triage_cmd
      ->add_option("inputs", triage.inputs,
                   "Dumps (TORCH_FR_DUMP_TEMP_FILE<rank>, pickle or JSON), or folders of them; a folder's *.log files "
                   "are read as the ranks' NCCL logs")
      ->required()
      ->check(CLI::ExistingPath);
  triage_cmd
      ->add_option("--nccl-log", triage.nccl_logs,
                   "The ranks' NCCL_DEBUG=INFO logs (NCCL_DEBUG_SUBSYS=INIT,COLL,TUNING): the communicator's channels")
      ->check(CLI::ExistingFile);
  triage_cmd->add_option(
      "--prefix", triage.prefix,
      "In a folder, the dumps' file name before the rank (default: the one ending in rank_, as the watchdog "
      "names them, else the one most files share)");

  railcheck::cli::ReplaySchedOptions sched;
  auto* sched_cmd = app.add_subcommand(
      "replay-sched",
      "Replay NCCL plan scheduling on every rank, each from its own inputs; exit 0 healthy, 1 divergent (the first "
      "operation whose plans differ, the ranks, the field and the setting behind it), 2 bad input, 3 inconclusive");
  sched_cmd
      ->add_option("inputs", sched.inputs, "A trace (.jsonl), NCCL COLL logs, or a scenario (scenarios/sched/*.toml)")
      ->required()
      ->check(CLI::ExistingFile);
  sched_cmd->add_option("--policy", sched.policies, "Scheduling policy, repeatable: nccl, passsm, p2p_first");
  sched_cmd->add_option("--coll-channels", sched.coll_channels, "Override the collective channel count");
  sched_cmd->add_option("--work-fifo-depth", sched.work_fifo_depth, "Override NCCL_WORK_FIFO_DEPTH");
  sched_cmd->add_option("--nccl", sched.nccl,
                        "NCCL rules to follow: 2.18 or 2.28 (default: the scenario's, else 2.28)");
  sched_cmd->add_option(
      "--nccl-env", sched.nccl_env,
      "NCCL settings the run had, [RANK:]NAME=VALUE, e.g. 'NCCL_PROTO=LL 1:NCCL_NTHREADS=128' (no RANK: every "
      "rank); per variable over the logs' ENV lines (NCCL_DEBUG_SUBSYS=ENV). Read: NCCL_ALGO, NCCL_PROTO, "
      "NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS, NCCL_NTHREADS, NCCL_LL128_NTHREADS, NCCL_BUFFSIZE, "
      "NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE, NCCL_P2P_NET/NVL/PCI_CHUNKSIZE, NCCL_NCHANNELS_PER_NET_PEER, "
      "NCCL_P2P_LL_THRESHOLD");
  sched_cmd
      ->add_option("--env-txt", sched.env_txt,
                   "A recording's env.txt: '# env NAME=VALUE ...' (every rank) and '# rank R env NAME=VALUE ...' "
                   "lines; below the logs' ENV lines")
      ->check(CLI::ExistingFile);
  sched_cmd->add_option("--comm", sched.comm,
                        "Logs of several communicators: a part of the one's id (commId 0x.., or a split's color); "
                        "default: the one with the most operations");
  sched_cmd->add_option("--max-ranks", sched.max_ranks, "Ranks shown in the channel table (default 16)");
  sched_cmd->add_option("--max-rows", sched.max_rows, "Collectives shown in the channel table (default 64)");

  railcheck::cli::AlignOptions align;
  auto* align_cmd = app.add_subcommand(
      "align", "Hold the NCCL 2.28 scheduling model against recorded NCCL runs, op by op (exit 1 on a mismatch)");
  align_cmd
      ->add_option("inputs", align.inputs, "Ground-truth folders (e.g. scenarios/groundtruth) or trace and log files")
      ->required();
  align_cmd->add_flag("--json", align.json, "Print the alignment as one JSON object");
  align_cmd->add_flag("--predict", align.predict,
                      "Let the model pick each collective's algorithm, protocol and warps (NCCL 2.28's tuner) and "
                      "compare those too, instead of taking them from the recording");
  align_cmd->add_option("--mismatches", align.max_mismatches, "Mismatches printed in full (default 1)");
  align_cmd->add_option("--nccl-env", align.nccl_env,
                        "NCCL_ALGO / NCCL_PROTO the run had, in NCCL's grammar, e.g. 'NCCL_PROTO=LL NCCL_ALGO=Tree' or "
                        "'NCCL_PROTO=^LL128;allreduce:LL128'; per variable over the logs' ENV lines "
                        "(NCCL_DEBUG_SUBSYS=ENV), then each folder's env.txt");

  railcheck::cli::SweepOptions sweep;
  auto* sweep_cmd =
      app.add_subcommand("sweep", "Run every point of a sweep file in parallel; rows go to CSV and JSON lines");
  sweep_cmd->add_option("sweep", sweep.sweep_file, "Sweep file (TOML), e.g. sweeps/rto-calibration.toml")->required();
  sweep_cmd->add_option("--out", sweep.out, "Output folder (default: sweep-results/<name>)");
  sweep_cmd->add_option("-j,--jobs", sweep.jobs, "Points run at once (default: every local core)");
  sweep_cmd->add_flag("--resume", sweep.resume, "Skip points already finished in the output folder");
  sweep_cmd->add_option("--shard", sweep.shard, "K/N: run only points whose index is K modulo N (K from 0)");
  sweep_cmd->add_option("--runner", sweep.runner, "railcheck executable that runs each point (default: this one)");

  railcheck::cli::ReportOptions report;
  auto* report_cmd = app.add_subcommand("report", "Plot sweep results: PNG figures and one self-contained HTML file");
  report_cmd->add_option("results", report.results, "Sweep output folder or its results.jsonl")->required();
  report_cmd->add_option("--out", report.out, "Folder for the figures and report.html (default: <results>/report)");
  report_cmd->add_option("--x", report.x,
                         "Sweep axis on the x axis (default: hw_window_ms where engine.qp_timeout and "
                         "engine.qp_retry_cnt are axes, else the first)");
  report_cmd->add_option("--lines", report.lines,
                         "Sweep axis drawn as one line per value (default: the next axis that is not true/false)");
  report_cmd->add_option("--panels", report.panels,
                         "Sweep axis drawn as one panel per value (default: a true/false axis, e.g. engine.liveness)");

  railcheck::cli::BudgetOptions budget;
  auto* budget_cmd = app.add_subcommand(
      "budget", "maxComms/maxRecvs for a NIC's QP and CQE limits, per resource (exit 1: over the device's capacity)");
  budget_cmd->add_option("scenario", budget.scenario, "Scenario: NIC from [topology], budget tunables from [engine]")
      ->check(CLI::ExistingFile);
  budget_cmd->add_option("--preset", budget.preset, "NIC preset: cx7-400g, efa-100g, efa-200g, test-10g");
  budget_cmd->add_option("--max-qp", budget.max_qp, "Override the device's max_qp");
  budget_cmd->add_option("--max-cqe", budget.max_cqe, "Override max_cqe (entries of one CQ)");
  budget_cmd->add_option("--max-qp-wr", budget.max_qp_wr, "Override max_qp_wr (WRs on one queue)");
  budget_cmd->add_option("--max-cq", budget.max_cq, "The device's max_cq (unchecked unless given)");
  budget_cmd->add_option("--channels", budget.channels, "Channels per connection (default 16)");
  budget_cmd->add_option("--wr-per-conn", budget.wr_per_conn, "In-flight WRs per comm (default 64)");
  budget_cmd->add_option("--max-recvs", budget.max_recvs, "Grouped receive width (default 8)");
  budget_cmd->add_option("--paths", budget.paths, "Paths per comm, primary + standbys (default 2)");
  budget_cmd->add_option("--two-sided-qps", budget.two_sided_qps, "Two-sided QPs per path (default 1)");
  budget_cmd->add_option("--one-sided-qps", budget.one_sided_qps, "One-sided (RDMA WRITE) QPs per path (default 0)");
  budget_cmd->add_option("--cap", budget.cap, "Fixed cap on maxComms (default the seed's 256; 0: none)");
  budget_cmd->add_option("--cq-layout", budget.cq_layout, "device (one shared CQ, default) or per-comm");
  budget_cmd->add_flag("--open", budget.open, "Also open connections on a modeled HCA until it refuses one");
  budget_cmd->add_option("--json", budget.json_path, "Also write the result as JSON to this file ('-' for stdout)");
  budget_cmd->add_option("--seed", budget.seed, "Accepted for sweeps; the budget draws nothing random");

  railcheck::cli::ImmOptions imm;
  auto* imm_cmd =
      app.add_subcommand("imm", "ImmCounter: invariants over every arrival order; a sharded transfer on SimGrid");
  imm_cmd->require_subcommand(1);
  auto* imm_check_cmd =
      imm_cmd->add_subcommand("check", "Check the ImmCounter invariants under every fate and arrival order");
  imm_check_cmd->add_option("--writes", imm.writes, "Writes in the transfer (1..4)");
  imm_check_cmd->add_option("--policy", imm.policy, "Failover replay policy: naive, probe or resync");
  imm_check_cmd->add_flag("--no-failover", imm.no_failover, "Only reorderings, no failover");
  auto* imm_transfer_cmd = imm_cmd->add_subcommand("transfer", "Time one WRITE_IMM transfer sharded over a GPU's NICs");
  imm_transfer_cmd->add_option("--preset", imm.preset, "NIC preset: cx7-400g, efa-100g or efa-200g");
  imm_transfer_cmd->add_option("--mib", imm.mib, "Transfer size in MiB");
  imm_transfer_cmd->add_option("--page-kib", imm.page_kib, "Paged write of pages this size, sharded by page");
  imm_transfer_cmd->add_option("--transport", imm.transport, "rc or srd (default: the preset's)");
  imm_transfer_cmd->add_option("--seed", imm.seed, "Seed of the SRD spraying delays");

  railcheck::cli::ValidateOptions validate;
  auto* validate_cmd = app.add_subcommand(
      "validate",
      "Run a scenario on the SimGrid driver and in the netns lab (tcp;ofi_rxm between two network namespaces, real "
      "faults) with the NIC replaced by the calibrated lab link; print both side by side (exit 0 agree, 1 disagree, "
      "77 cannot run here)");
  validate_cmd->add_option("scenario", validate.scenario, "Scenario file (TOML)")->required()->check(CLI::ExistingFile);
  validate_cmd->add_option("--runs", validate.runs, "Lab runs; the hardware column is their median (default 3)")
      ->check(CLI::Range(1, 50));
  validate_cmd->add_option("--provider", validate.provider, "libfabric provider for the lab (default tcp;ofi_rxm)");
  validate_cmd
      ->add_option("--lab-gbps", validate.lab_gbps,
                   fmt::format("Shape each lab rail to this rate each way with tc tbf, so the stream is link-bound "
                               "as a NIC's is (default {}, at least {}; 0 leaves the veth pairs unshaped: the stream "
                               "then runs at this machine's CPU speed)",
                               railcheck::validation::kDefaultLabGbps, railcheck::validation::kMinLabGbps))
      ->check(CLI::Range(0.0, 400.0));
  validate_cmd->add_option("--seed", validate.seed, "The sim's seed (default: the scenario's)");
  validate_cmd->add_option("--json", validate.json_path, "Also write the comparison as JSON ('-' for stdout)");
  validate_cmd->add_flag("--calibrate", validate.calibrate,
                         "Only measure the lab link for this scenario's message size and window, and print the "
                         "simulator's parameters for it as [topology] keys (a scenario with them runs on the lab link)");
  validate_cmd->add_option("--out", validate.out_path, "With --calibrate: also write the [topology] keys to this file");

  railcheck::cli::ConformOptions conform;
  auto* conform_cmd = app.add_subcommand("conform",
                                         "Hardware conformance suite between two processes (exit 1: a case failed, 77: "
                                         "skipped, no RDMA device or no netns)");
  conform_cmd->add_option("--transport", conform.transport, "fabric (libfabric) or verbs");
  conform_cmd->add_option("--provider", conform.provider, "libfabric provider: tcp;ofi_rxm, shm, efa");
  conform_cmd
      ->add_option("--sizes", conform.sizes, "Send/recv sizes in bytes (default 0 1 4096 65536 1048576 67108864)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 30));  // each buffer is allocated: at most 1 GiB
  conform_cmd->add_option("--seed", conform.seed, "Seed of the message sizes and contents");
  conform_cmd->add_option("--json", conform.json_path, "Also write the results as JSON to this file ('-' for stdout)");
  conform_cmd->add_flag("--netns", conform.netns,
                        "Run between two network namespaces joined by one veth pair per rail (169.254.1.0/30, "
                        "169.254.2.0/30) and add the real failover case: rail 0's link taken down mid-stream. "
                        "Needs root and iproute2; exit 77 where namespaces cannot be made");
  conform_cmd->add_option("--peer-fd", conform.peer_fd, "Internal: run as the suite's peer on this socket")->group("");
  conform_cmd->add_option("--peer-rails", conform.peer_rails, "Internal: the peer's rail addresses, a,b")
      ->delimiter(',')
      ->group("");
  conform_cmd->add_option("--cut-link", conform.cut_link, "Internal: the link the peer takes down")->group("");

  // Every option that holds a number refuses a negative value (see kNotNegative).
  std::vector<CLI::App*> todo{&app};
  while (!todo.empty()) {
    CLI::App* a = todo.back();
    todo.pop_back();
    for (CLI::Option* opt : a->get_options())
      if (opt->get_type_name() == "UINT" || opt->get_type_name() == "INT") opt->check(kNotNegative);
    for (CLI::App* sub : a->get_subcommands({})) todo.push_back(sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, exit 2, like every other bad input (CLI11 would exit 101..114).
    fmt::print(stderr, "railcheck: {} (railcheck --help lists the commands and options)\n", one_line(e.what()));
    return kExitBadInput;
  }
  if (run_cmd->parsed()) return railcheck::cli::cmd_run(run);
  if (check_cmd->parsed()) return railcheck::cli::cmd_check(check);
  if (replay_cmd->parsed()) return railcheck::cli::cmd_replay(replay);
  if (tun_cmd->parsed()) return railcheck::cli::cmd_tunables(tun_markdown);
  if (weights_cmd->parsed()) return railcheck::cli::cmd_route_weights(route);
  if (moe_cmd->parsed()) return railcheck::cli::cmd_route_moe(route);
  if (sched_cmd->parsed()) return railcheck::cli::cmd_replay_sched(sched);
  if (triage_cmd->parsed()) return railcheck::cli::cmd_triage(triage);
  if (align_cmd->parsed()) return railcheck::cli::cmd_align(align);
  if (sweep_cmd->parsed()) return railcheck::cli::cmd_sweep(sweep);
  if (swarm_cmd->parsed()) return railcheck::cli::cmd_swarm(swarm);
  if (report_cmd->parsed()) return railcheck::cli::cmd_report(report);
  if (budget_cmd->parsed()) return railcheck::cli::cmd_budget(budget);
  if (conform_cmd->parsed()) return railcheck::cli::cmd_conform(conform);
  if (validate_cmd->parsed()) return railcheck::cli::cmd_validate(validate);
  if (imm_check_cmd->parsed()) return railcheck::cli::cmd_imm_check(imm);
  if (imm_transfer_cmd->parsed()) return railcheck::cli::cmd_imm_transfer(imm);
  return kExitBadInput;
}

}  // namespace
