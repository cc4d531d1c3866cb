#pragma once
// Subcommands. Exit codes are shared by all of them:
//   0  the job ran and nothing it checks was violated
//   1  the job ran and found a violation (a duplicate, a lost message, a hang)
//   2  bad input (scenario, option); the message says what and where
//   3  inconclusive: a model check stopped at a limit before exhausting its bound
//  70  internal error: a bug in railcheck (an uncaught exception, a fatal signal), never a verdict
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace railcheck::cli {

constexpr int kExitOk = 0;
constexpr int kExitViolation = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInconclusive = 3;
constexpr int kExitInternal = 70;  // EX_SOFTWARE

struct RunOptions {
  std::string scenario;
  std::optional<std::uint64_t> seed;
  std::string json_path;
  std::string policy;
  bool print_events = false;
  bool progress = false;
  std::string trace_path;  // Chrome/Perfetto trace-event JSON of the run (backends/sim/timeline.hpp)
};

int cmd_run(const RunOptions& o);

// railcheck check: model-check a world of verify/ (failover, plan, imm).
struct CheckOptions {
  std::string file;  // model file or scenario file
  std::string mode;  // dfs | bfs | random (default: the file's, else dfs)
  std::string policy;
  std::optional<std::uint64_t> max_states;
  std::optional<std::uint32_t> max_depth;
  std::optional<std::uint64_t> walks;
  std::optional<std::uint64_t> seed;
  std::optional<double> max_seconds;  // wall-time bound in every mode (exit 3 when hit)
  std::optional<unsigned> threads;    // bfs only (verify/parallel_bfs.hpp)
  std::string symmetry;               // on | off (failover world only; empty: on)
  std::string trace_path = "counterexample.trace.json";
  std::string json_path;
  bool list_invariants = false;
  bool progress = false;
};
int cmd_check(const CheckOptions& o);
// --threads against the search mode: the bad-input line, or nothing (cli/cmd_check.cpp).
std::optional<std::string> check_threads_error(const CheckOptions& o, bool threaded);
// The worlds a model file names with a top-level `world = "..."` (plan-channels,
// plan-lifecycle, imm; cli/cmd_check_worlds.cpp): nothing when `o.file` names none of them.
std::optional<int> check_named_world(const CheckOptions& o);
void list_world_invariants();
// The zero-buffer worlds (a model file with world = "zerobuf-..."): cli/cmd_check_zerobuf.cpp.
bool is_zerobuf_model_file(const std::string& path);
int cmd_check_zerobuf(const CheckOptions& o);
void list_zerobuf_invariants();

// railcheck replay: re-execute a counterexample trace through the engine.
struct ReplayOptions {
  std::string trace;
  std::string policy;        // replay the same steps under another policy
  std::string sim_scenario;  // write the trace's rail faults as a scenario here
  bool sim = false;          // and run that scenario on the SimGrid driver
};
int cmd_replay(const ReplayOptions& o);
// A trace of one of those worlds: nothing when `o.trace` is not one.
std::optional<int> replay_named_world(const ReplayOptions& o);
bool is_zerobuf_trace_file(const std::string& path);
int cmd_replay_zerobuf(const ReplayOptions& o);
// railcheck tunables: the engine's tunable table (RAILCHECK_HA_TUNABLES); `markdown`: as the rows
// of docs/scenarios.md's [engine] table.
int cmd_tunables(bool markdown = false);

// railcheck route weights|moe: routing tables from a spec (scenarios/routing/), timed on SimGrid.
struct RouteOptions {
  std::string spec;
  std::string json_path;
  bool table_only = false;                    // weights: build and print the table, no simulation
  std::optional<std::uint32_t> trainer_rank;  // weights: print this trainer's routing table
  std::string write_queues;                   // weights: overrides the spec's pipeline.write_queues
  bool progress = false;                      // weights: a line on stderr every 2 s of wall time
  std::string timeline_path;                  // weights: per-GPU stage and per-NIC byte timelines (JSON)
  std::optional<std::uint32_t> moe_rank;      // moe: print this rank's dispatch send table
  std::optional<std::uint64_t> seed;          // moe: token assignment seed (default: the spec's)
  bool simgrid = false;                       // moe: time on SimGrid's engine (Full), not the fluid solver
};
int cmd_route_weights(const RouteOptions& o);
int cmd_route_moe(const RouteOptions& o);

// railcheck imm check|transfer: ImmCounter invariants over every arrival order (verify/imm/),
// and one sharded WRITE_IMM transfer on SimGrid (backends/sim/imm/).
struct ImmOptions {
  std::uint32_t writes = 3;  // check
  std::string policy = "resync";
  bool no_failover = false;
  std::string preset = "efa-100g";  // transfer
  std::uint64_t mib = 64;
  std::uint64_t page_kib = 0;  // 0: one single write
  std::string transport;       // rc | srd; default: the preset's
  std::uint64_t seed = 1;
};
int cmd_imm_check(const ImmOptions& o);
int cmd_imm_transfer(const ImmOptions& o);

// railcheck replay-sched: NCCL plan scheduling replayed on every rank (engine/plan/).
struct ReplaySchedOptions {
  std::vector<std::string> inputs;    // one trace, NCCL logs (one per rank or merged), or one scenario
  std::vector<std::string> policies;  // default: the scenario's, else every policy
  std::optional<std::uint32_t> coll_channels;
  std::optional<std::uint32_t> work_fifo_depth;
  std::optional<std::string> nccl;      // "2.18" | "2.28"; default: the scenario's, else 2.28
  std::optional<std::string> nccl_env;  // "NCCL_PROTO=LL 1:NCCL_NTHREADS=128": over the logs' ENV lines
  std::optional<std::string> env_txt;   // a recording's env.txt (per-rank "# rank R env ..." lines)
  std::optional<std::string> comm;      // logs of several communicators: a part of the one's id
  std::uint32_t max_ranks = 16;         // columns of the channel table
  std::uint32_t max_rows = 64;          // rows of the channel table
};
int cmd_replay_sched(const ReplaySchedOptions& o);

// railcheck triage: a hang's verdict from PyTorch Flight Recorder dumps (triage/, docs/triage.md).
struct TriageOptions {
  std::vector<std::string> inputs;     // dump files, or folders of them (their *.log files are NCCL logs)
  std::vector<std::string> nccl_logs;  // the ranks' NCCL INFO logs
  std::optional<std::string> prefix;   // the dumps' name before the rank; default: the commonest
};
int cmd_triage(const TriageOptions& o);

// railcheck align: the NCCL 2.28 scheduling model against recorded runs (engine/plan/alignment.hpp).
struct AlignOptions {
  std::vector<std::string> inputs;  // ground-truth folders (scenarios/groundtruth or one workload), or files
  bool json = false;
  bool predict = false;                 // the model's own algorithm and protocol (nccl228_tuner), not the recording's
  std::uint32_t max_mismatches = 1;     // mismatches printed in full
  std::optional<std::string> nccl_env;  // "NCCL_PROTO=LL NCCL_ALGO=Tree": over the logs' ENV lines and env.txt
};
int cmd_align(const AlignOptions& o);

// railcheck sweep: every point of a sweep file, each as a `railcheck run` child (backends/sim/sweep/).
struct SweepOptions {
  std::string sweep_file;
  std::string out;               // default: sweep-results/<name>
  std::optional<unsigned> jobs;  // default: every local core
  bool resume = false;           // skip points already in <out>/results.jsonl
  std::string shard;             // "K/N": run only points with index % N == K
  std::string runner;            // railcheck executable for the points (default: this one)
};
int cmd_sweep(const SweepOptions& o);

// railcheck swarm: seeded whole-system simulation testing (swarm/, docs/swarm.md).
struct SwarmOptions {
  std::optional<std::uint64_t> seeds;         // how many seeds (default 1000 unless --for)
  std::optional<double> seconds;              // --for: wall-time budget
  std::optional<std::uint64_t> first_seed;    // default: a fresh one, printed
  std::optional<unsigned> jobs;               // default: every local core
  std::optional<unsigned> seeds_per_process;  // default: swarm::kSeedsPerProcess
  std::optional<std::uint64_t> seed;          // replay one seed
  std::optional<std::uint64_t> shrink;        // shrink one failing seed
  std::string out;                            // --shrink / --seed: write the scenario here
  std::string policy;                         // force a replay policy (naive: the seed's unsafe rule)
  std::string mutation;                       // a deliberately broken engine (verify/mutation.hpp)
  std::uint32_t max_ranks = 64;
  std::uint32_t shrink_runs = 400;
};
int cmd_swarm(const SwarmOptions& o);

// railcheck report: PNG plots and one HTML file from sweep results (reports/railcheck_report.py).
struct ReportOptions {
  std::string results;  // sweep output folder or its results.jsonl
  std::string out;      // default: <results>/report
  std::string x;        // axis on x (default: hw_window_ms where qp_timeout and qp_retry_cnt are axes, else the first)
  std::string lines;    // axis drawn as one line per value (default: the next axis not true/false)
  std::string panels;   // axis drawn as one panel per value (default: a true/false axis)
};
int cmd_report(const ReportOptions& o);

// railcheck budget: maxComms / maxRecvs with the per-resource breakdown (engine/budget/, seed
// §15.2, §16.6); --open also counts the connections a modeled HCA holds (seed §15.4, exp. C).
struct BudgetOptions {
  std::string scenario;  // caps from topology.nic, usage from [engine] and paths_per_conn
  std::string preset;    // NIC preset (models/nic_preset.hpp)
  std::optional<std::uint64_t> max_qp, max_cqe, max_qp_wr, max_cq;
  std::optional<std::uint32_t> channels, wr_per_conn, max_recvs, paths, two_sided_qps, one_sided_qps, cap;
  std::string cq_layout;  // device (default) | per-comm
  bool open = false;
  std::string json_path;              // '-' for stdout
  std::optional<std::uint64_t> seed;  // accepted so sweeps can run points; nothing here is random
};
int cmd_budget(const BudgetOptions& o);

// railcheck validate: one scenario on the SimGrid driver and in the netns lab, side by side
// (backends/validate, docs/validation.md). Exit 0 the drivers agree within the tolerance, 1 they
// disagree, 2 bad input, 77 the scenario or this machine cannot run it in the lab.
struct ValidateOptions {
  std::string scenario;
  std::string provider = "tcp;ofi_rxm";
  std::uint32_t runs = 3;             // lab runs; the hardware column is their median
  std::optional<double> lab_gbps;     // each lab rail's rate (tc tbf); 0 unshaped; default validation's
  std::optional<std::uint64_t> seed;  // the sim's; default the scenario's
  std::string json_path;              // '-' for stdout
  bool calibrate = false;             // only measure the lab link; print it as [topology] keys
  std::string out_path;               // --calibrate: also write them to this file
};
int cmd_validate(const ValidateOptions& o);

// railcheck conform: the hardware conformance suite between two processes (backends/hw/conform).
// Exit 0 all cases pass, 1 a case failed, 2 bad input (or no such provider), 77 skipped: no RDMA
// device (verbs), or no network namespaces here (--netns: not root, or the kernel refuses).
struct ConformOptions {
  std::string transport = "fabric";  // fabric | verbs
  std::string provider = "tcp;ofi_rxm";
  std::vector<std::size_t> sizes;  // send/recv sizes in bytes; empty: 0 B .. 64 MiB
  std::uint64_t seed = 1;
  std::string json_path;                // '-' for stdout
  bool netns = false;                   // two network namespaces, rail 0's link taken down
  std::optional<int> peer_fd;           // internal: run as the suite's peer process
  std::vector<std::string> peer_rails;  // internal: the peer's rail addresses
  std::string cut_link;                 // internal: the interface the peer takes down
};
int cmd_conform(const ConformOptions& o);

}  // namespace railcheck::cli
