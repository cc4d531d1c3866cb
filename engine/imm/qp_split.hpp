#pragma once
// The two-QP split (seed, first entry; arXiv 2510.27656 §3.2). On verbs an incoming WRITE_IMM
// consumes a posted RECV, and an RC QP consumes its RECVs strictly in the order they were
// posted, whatever the incoming opcode. If the library's RECVs (posted so WRITE_IMMs can land)
// and the application's RECVs (for two-sided SEND/RECV) share one QP, a WRITE_IMM can complete
// an application RECV and a SEND can land in a library RECV. TransferEngine opens two RC QPs
// per peer, one for one-sided and one for two-sided traffic. (libfabric's FI_REMOTE_CQ_DATA on
// EFA needs no RECV for the immediate, so the split only matters on verbs.)
#include <cstdint>
#include <deque>

#include "engine/core/result.hpp"

namespace railcheck::imm {

enum class Opcode : std::uint8_t { Send, WriteImm };
enum class RecvOwner : std::uint8_t { Application, Library };
enum class QpLayout : std::uint8_t { Shared, Split };

struct PostedRecv {
  RecvOwner owner = RecvOwner::Application;
  std::uint64_t wr_id = 0;
};

// What an incoming operation consumed; `misrouted` when the RECV belonged to the other kind of
// traffic (a SEND in a library RECV, a WRITE_IMM in an application RECV).
struct RecvMatch {
  PostedRecv recv;
  bool misrouted = false;
};

// The receive side of one peer connection under a layout.
class VerbsReceiver {
 public:
  explicit VerbsReceiver(QpLayout layout) : layout_(layout) {}

  void post_recv(PostedRecv r);
  // The head RECV of the QP the opcode arrives on. An empty queue is an RNR error, as on an RC
  // QP with no RECV posted.
  Result<RecvMatch> deliver(Opcode op);

 private:
  std::deque<PostedRecv>& queue_for(RecvOwner owner);
  std::deque<PostedRecv>& queue_for(Opcode op);
  QpLayout layout_;
  std::deque<PostedRecv> one_sided_;  // the only queue under Shared
  std::deque<PostedRecv> two_sided_;
};

}  // namespace railcheck::imm
