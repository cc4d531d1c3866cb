#pragma once
#include <cstdint>

namespace railcheck::sim {

// How a packet crosses the simulated fabric (issue 15). All three carry it over the same route
// with the same network model, so outcomes and counters are the same
// (tests/backends/sim/wire_fidelity_test.cpp); they differ in what SimGrid 3.32 pays per packet.
//   - Sendto: a host-to-host `Comm::sendto`. SimGrid detaches such comms and keeps every one in
//     a single list that it scans at each completion: cost grows with the square of the packets
//     in flight (the old driver, kept for one release).
//   - Mailbox: `Mailbox::put` to a mailbox whose permanent receiver sits on the destination NIC
//     host, so the transfer starts at once without a rendezvous; nothing goes on that list. One
//     short-lived actor (and its stack) per packet in flight.
//   - Event: the same puts, but no actor per packet: each packet's life is a state machine
//     (event_wire.hpp) driven by the actor of the rank that sent it, which waits on its comms and
//     its timers at once. Same-instant ties may run in another order than on the other two wires.
enum class WireMode : std::uint8_t { Sendto, Mailbox, Event };

// The wire of a run that names none (RAILCHECK_SIM_WIRE unset).
constexpr WireMode kDefaultWire = WireMode::Event;

}  // namespace railcheck::sim
