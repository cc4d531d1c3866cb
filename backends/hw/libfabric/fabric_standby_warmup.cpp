// A standby's first message after it became ready, sent by the driver, not the engine.
//
// Why: ofi_rxm connects to a peer lazily, on the first message, and advances its connection
// manager only every FI_OFI_RXM_CM_PROGRESS_INTERVAL (10 ms by default). A standby carries nothing
// after phase 2 (which goes over the primary) while the connection is busy (heartbeats go only
// while it is idle), so without this the failover's first message on it paid the connection
// setup: 23-29 ms of the 33-44 ms between detection and the first replayed delivery in the netns
// lab (docs/failover.md, "Real transports"). Connecting at standby-ready moves that cost out of
// the failover.
//
// Both ends warm it: the first message from either side makes ofi_rxm set up its buffer pools for
// the connection (~35 MB zeroed on tcp;ofi_rxm 1.17: ~9 000 page faults, tens of ms), and a
// receiver's first message on the standby (its first heartbeat answer, or its reply during a
// failover) paid that too until the receiver warmed the rail as well (issue 32: it landed inside
// the first 100 ms of traffic, 10-15 % of a 64 KiB write benchmark's rate on tcp;ofi_rxm).
//
// What: the sender sends an empty delivery ack (DeliveryAck{0}, control_codec.hpp), which a
// receiver ignores (only a sender consumes them), this one and older backends alike; the receiver
// sends Pong{0}, which every sender's engine drops as an answer to no ping (heartbeat nonces
// start at 1).
#include "backends/hw/libfabric/fabric_connection_state.hpp"

namespace railcheck {

void FabricConnection::State::warm_standby(PathIndex path) {
  if (path == engine->active_path()) return;
  RailSlot& slot = rails.at(path.value);
  if (slot.cut || slot.err || !slot.rail->has_peer()) return;
  if (engine->role() == ConnRole::Sender) {
    send_control_bytes(path.value, fabric::encode_delivery_ack(fabric::DeliveryAck{0}), false);
  } else {
    send_control(ControlChannel::on(path), Pong{0});
  }
}

}  // namespace railcheck
