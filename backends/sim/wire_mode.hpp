#pragma once
#include <cstdint>

namespace railcheck::sim {

// How a packet crosses the simulated fabric (issue 15). Both carry it over the same route with the
// same network model, so every simulated instant and outcome is the same
// (tests/backends/sim/wire_fidelity_test.cpp); they differ in what SimGrid 3.32 pays per packet.
//   - Sendto: a host-to-host `Comm::sendto`. SimGrid detaches such comms and keeps every one in
//     a single list that it scans at each completion: cost grows with the square of the packets
//     in flight (the old driver, kept for one release).
//   - Mailbox: `Mailbox::put` to a mailbox whose permanent receiver sits on the destination NIC
//     host, so the transfer starts at once without a rendezvous; nothing goes on that list.
enum class WireMode : std::uint8_t { Sendto, Mailbox };

}  // namespace railcheck::sim
