#pragma once
// The bootstrap over TCP: every rank calls run_bootstrap() with its own blob of the same size
// and gets back every rank's blob, indexed by rank, or one Error that says what went wrong
// (on every rank: a rejected or aborted run fails everywhere, never hangs; see
// engine/bootstrap/ and docs/bootstrap.md for the protocol).
//
// Usage: exchange libfabric endpoint names between two processes.
//
//   #include "backends/hw/bootstrap/tcp_bootstrap.hpp"
//   using namespace railcheck;
//
//   // Before forking/launching the ranks: let the kernel pick the root's port.
//   auto root = hw::RootListener::open("127.0.0.1:0");           // Result<RootListener>
//   if (!root) { fmt::print(stderr, "{}\n", root.error().message()); return 2; }
//   const std::string root_address = root->address();             // "127.0.0.1:41234"
//
//   // In each rank (rank 0 passes &*root; the others pass nullptr):
//   hw::BootstrapConfig cfg;
//   cfg.root_address = root_address;
//   cfg.rank = my_rank;                // 0..nranks-1
//   cfg.nranks = 2;
//   cfg.run_id = run_id;               // same on every rank; tells concurrent runs apart
//   cfg.timeout = sec(30);
//   cfg.key = hw::load_job_key(...);  // the job's key (backends/hw/auth/job_key_source.hpp)
//   std::array<std::uint8_t, 128> name{};  size_t len = name.size();
//   fi_getname(&ep->fid, name.data(), &len);                      // every rank sends 128 bytes
//   auto all = hw::run_bootstrap(cfg, name, my_rank == 0 ? &*root : nullptr);
//   if (!all) { fmt::print(stderr, "{}\n", all.error().message()); return 1; }
//   const std::vector<std::uint8_t>& peer_name = all->blobs[1 - my_rank];
//
// With a fixed port there is no RootListener to hand around: rank 0 opens cfg.root_address
// itself (rank0_hosts_root), the others connect to it, retrying until rank 0 is listening.
//
// Threads: run_bootstrap() touches no global state; ranks may run as threads of one process.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/hw/bootstrap/tcp_socket.hpp"
#include "engine/auth/job_key.hpp"
#include "engine/core/result.hpp"
#include "engine/core/time.hpp"

namespace railcheck::hw {

// The run id when the caller has none: runs that share a root address must pass distinct ids.
constexpr std::uint64_t kDefaultRunId = 0x7261696c63686b31ULL;  // "railchk1"

struct BootstrapConfig {
  std::string root_address;  // "<IPv4>:<port>" of the root listener
  std::uint32_t rank = 0;
  std::uint32_t nranks = 1;
  std::uint64_t run_id = kDefaultRunId;
  Nanos timeout = sec(30);  // from the call to the last blob; every rank fails after it
  // Where this rank listens for its ring predecessor (the port is always picked by the kernel).
  std::string ring_host = "127.0.0.1";
  // Rank 0 opens the root at root_address itself when no RootListener is passed.
  bool rank0_hosts_root = true;
  // NCCL's abortFlag (seed §1.2): another thread sets it to give up; this rank then aborts and
  // every other rank learns it. Checked at least every kAbortPollInterval.
  const std::atomic<bool>* abort_flag = nullptr;
  // The job key every frame is sealed and checked with (issue 46, docs/security.md): frames
  // that are forged, altered, replayed or of another job are refused, logged once per
  // connection and dropped, and the run goes on. Without a key the bootstrap refuses to run
  // unless allow_unauthenticated is set, which logs a warning: off only by an explicit setting.
  std::optional<auth::JobKey> key;
  bool allow_unauthenticated = false;
  // Where the refusals and that warning go, one line each; empty: stderr.
  std::function<void(const std::string&)> log;
};

constexpr Nanos kAbortPollInterval = ms(10);

// The root's listening socket, opened before the ranks start so that port 0 can be used and
// every rank can be told the picked port. Move-only; run_bootstrap() uses it and closes it.
class RootListener {
 public:
  static Result<RootListener> open(const std::string& address);
  std::string address() const { return listener_.bound.to_string(); }
  Listener& listener() { return listener_; }

 private:
  explicit RootListener(Listener l) : listener_(std::move(l)) {}
  Listener listener_;
};

struct BootstrapBlobs {
  std::vector<std::vector<std::uint8_t>> blobs;  // blobs[r] is rank r's blob
  std::uint64_t refused = 0;                     // frames this process refused and dropped
};
using BootstrapResult = Result<BootstrapBlobs>;

// Runs this rank's part of the bootstrap (and the root's, with `root`, or for rank 0 when
// cfg.rank0_hosts_root). Blocks until every blob has arrived, the run fails, or cfg.timeout.
BootstrapResult run_bootstrap(const BootstrapConfig& cfg, std::span<const std::uint8_t> my_blob,
                              RootListener* root = nullptr);

}  // namespace railcheck::hw
