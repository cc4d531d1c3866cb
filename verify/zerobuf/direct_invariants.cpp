#include "verify/zerobuf/direct_invariants.hpp"

#include "verify/zerobuf/fast_liveness.hpp"

namespace railcheck::verify::zerobuf {

const std::vector<Invariant<DirectWorld>>& direct_invariants() {
  static const std::vector<Invariant<DirectWorld>> all = {
      recorded_violation<DirectWorld>(
          "no-read-before-written",
          "a rank's input is read, and an output consumed, only once it holds this call's data"),
      recorded_violation<DirectWorld>(
          "no-overwrite-before-readers-done",
          "no buffer is overwritten while someone still has to read it (an input a peer still reads for an earlier "
          "call, an output its owner has not consumed)"),
      recorded_violation<DirectWorld>("direct-results-match-spec",
                                      "every output the application consumes equals the collective's spec (sums in "
                                      "rank order)"),
      no_deadlock_invariant<DirectWorld>(),
      dead_peer_is_error_invariant<DirectWorld>(),
  };
  return all;
}

}  // namespace railcheck::verify::zerobuf
