#include "verify/zerobuf/ll_invariants.hpp"

#include "verify/zerobuf/fast_liveness.hpp"

namespace railcheck::verify::zerobuf {

const std::vector<Invariant<LlWorld>>& ll_invariants() {
  static const std::vector<Invariant<LlWorld>> all = {
      recorded_violation<LlWorld>("ll-accepts-call-data",
                                  "every value a receiver takes for LL call k is its sender's call-k data: not stale, "
                                  "not torn, not from a later call"),
      recorded_violation<LlWorld>("ll-output-matches-spec",
                                  "every output the application consumes equals the collective's spec (sums in rank "
                                  "order)"),
      no_deadlock_invariant<LlWorld>(),
      dead_peer_is_error_invariant<LlWorld>(),
  };
  return all;
}

}  // namespace railcheck::verify::zerobuf
