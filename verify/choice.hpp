#pragma once
// One nondeterministic step of the failover world. A counterexample is a list of these; its
// text form ("data c0 p1", "kill p0", "timer") is what trace files store, so it must stay
// stable: a trace recorded today replays tomorrow or says clearly that it no longer fits.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace railcheck::verify {

struct Choice {
  enum class Kind : std::uint8_t {
    Data,        // the next data packet of (conn, path) reaches the receiver's QP
    Ack,         // the next ACK of (conn, path) reaches the sender's QP
    RecvCqe,     // the receiver polls the next completion of path `path`
    Control,     // the next control message to end `to` on channel `path` (== paths: out of band)
    Timer,       // time advances to the earliest armed timer (an engine's or an HCA retry window)
    KillLink,    // rail `path` dies: everything in flight on it is lost
    RepairLink,  // rail `path` comes back
    LoseData,    // the next data packet of (conn, path) is lost (the HCA will retransmit)
    LoseAck,     // the next ACK of (conn, path) is lost
    LoseControl, // the next control message to `to` on channel `path` is lost
    Retransmit,  // the sender's HCA resends from its oldest unacknowledged packet (go-back-N)
    Isend,       // the user posts the next isend on `conn`
    Irecv,       // the user posts the next irecv on `conn`
  };
  Kind kind = Kind::Timer;
  std::uint8_t conn = 0;
  std::uint8_t path = 0;
  std::uint8_t to = 0;     // Control, LoseControl: 0 = to the sender, 1 = to the receiver
  std::uint8_t index = 0;  // Data on an unordered transport: position in the queue
  bool operator==(const Choice&) const = default;
};

std::string to_string(const Choice& c);
std::optional<Choice> parse_choice(std::string_view text);

}  // namespace railcheck::verify
