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
// What: an empty delivery ack (DeliveryAck{0}, control_codec.hpp) on the standby's rail. A
// receiver ignores delivery acks (only a sender consumes them), this one and older backends alike.
#include "backends/hw/libfabric/fabric_connection_state.hpp"

namespace railcheck {

void FabricConnection::State::warm_standby(PathIndex path) {
  if (engine->role() != ConnRole::Sender || path == engine->active_path()) return;
  RailSlot& slot = rails.at(path.value);
  if (slot.cut || slot.err || !slot.rail->has_peer()) return;
  send_control_bytes(path.value, fabric::encode_delivery_ack(fabric::DeliveryAck{0}), false);
}

}  // namespace railcheck
