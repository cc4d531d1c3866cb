#pragma once
// The swarm's invariant checker: a RunObserver (backends/sim/run_observer.hpp) that looks at the
// world after every batch of engine actions, so a violation is caught at the event that made
// it, and stops the run there. Checked on every event:
//   exactly-once   no buffer receives a duplicate, another message, or nothing
//   in-order       message i lands in buffer i (the workload checks addresses), and the
//                  receiver's delivered watermark never moves back
//   clean failure  a request fails only on a connection that has failed, and a failed
//                  connection gives its reason; a failed connection never comes back
//   assertions     no engine assertion (engine/core/engine_assert.hpp) tripped
// and at the end, liveness: every connection delivered everything or failed cleanly by the
// liveness bound (the run's time limit). It also records coverage (failover phases, triggers)
// and a digest of the event trace, which a replay must reproduce bit for bit.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/sim/run_observer.hpp"
#include "engine/core/time.hpp"
#include "verify/mutation.hpp"

namespace railcheck::swarm {

// Crash: the worker process died inside the seed (swarm_pool.cpp).
enum class FindingKind : std::uint8_t { ExactlyOnce, InOrder, LostRequest, SilentFailure, Assertion, Liveness, Crash };
std::string_view to_string(FindingKind k);

struct Finding {
  FindingKind kind = FindingKind::ExactlyOnce;
  Nanos at{};
  std::uint32_t conn = 0;
  std::string detail;
};

class SwarmChecker final : public sim::RunObserver {
 public:
  // `mutation` rewrites every batch first (verify/mutation.hpp): a deliberately broken engine.
  explicit SwarmChecker(verify::Mutation mutation = verify::Mutation::None) : mutation_(mutation) {}

  void before_actions(sim::SimWorld& w, std::uint32_t conn, sim::Side side, Actions& batch) override;
  void after_actions(sim::SimWorld& w, std::uint32_t conn, sim::Side side, const Actions& batch) override;
  // After the run: the liveness check.
  void at_end(sim::SimWorld& w) override;

  const std::optional<Finding>& finding() const { return finding_; }
  std::uint32_t phases() const { return phases_; }      // bit p: FailoverPhase p was reached
  std::uint32_t triggers() const { return triggers_; }  // bit t: FailoverTrigger t started a failover
  std::uint64_t digest() const { return digest_; }
  std::uint64_t batches() const { return batches_; }

 private:
  void report(sim::SimWorld& w, FindingKind k, std::uint32_t conn, std::string detail);
  void mix(std::uint64_t v) { digest_ = (digest_ ^ v) * 0x100000001b3ULL; }

  verify::Mutation mutation_;
  std::optional<Finding> finding_;
  std::vector<std::uint64_t> watermark_;  // per connection: receiver's delivered() last seen
  std::vector<std::uint8_t> failed_;      // per connection end (conn * 2 + side): failed seen
  std::uint32_t phases_ = 0;
  std::uint32_t triggers_ = 0;
  std::uint64_t digest_ = 0xcbf29ce484222325ULL;
  std::uint64_t batches_ = 0;
};

}  // namespace railcheck::swarm
