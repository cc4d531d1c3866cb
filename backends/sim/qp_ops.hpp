#pragma once
// The simulated HCA's verbs: post_send, post_recv, modify_qp. They change SimQp state, start
// packets, and queue the completions an HCA would generate (flushes on ERR).
#include <cstdint>

#include "backends/sim/sim_world.hpp"

namespace railcheck::sim {

void sim_post_send(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, const WorkRequest& wr);
void sim_post_recv(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, const WorkRequest& wr);
void sim_modify_qp(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, QpState target);
// Report a completion to the side that posted the WR (now, in FIFO order).
void sim_complete(SimWorld& w, std::uint32_t conn, Side side, const CompletionEvent& e);
// The requester QP failed with `status`: it goes to ERR, its oldest outstanding WR gets
// `status`, every other one WR_FLUSH_ERR.
void sim_requester_error(SimWorld& w, std::uint32_t conn, Side side, std::uint32_t path, WcStatus status);

}  // namespace railcheck::sim
