#include "engine/imm/qp_split.hpp"

namespace railcheck::imm {

std::deque<PostedRecv>& VerbsReceiver::queue_for(RecvOwner owner) {
  return layout_ == QpLayout::Split && owner == RecvOwner::Application ? two_sided_ : one_sided_;
}

std::deque<PostedRecv>& VerbsReceiver::queue_for(Opcode op) {
  return queue_for(op == Opcode::Send ? RecvOwner::Application : RecvOwner::Library);
}

void VerbsReceiver::post_recv(PostedRecv r) { queue_for(r.owner).push_back(r); }

Result<RecvMatch> VerbsReceiver::deliver(Opcode op) {
  auto& q = queue_for(op);
  if (q.empty())
    return Error{
        op == Opcode::Send ? "SEND arrived with no RECV posted (RNR)" : "WRITE_IMM arrived with no RECV posted (RNR)",
        "keep RECVs posted ahead of the peer's sends"};
  const PostedRecv r = q.front();
  q.pop_front();
  const RecvOwner wanted = op == Opcode::Send ? RecvOwner::Application : RecvOwner::Library;
  return RecvMatch{r, r.owner != wanted};
}

}  // namespace railcheck::imm
