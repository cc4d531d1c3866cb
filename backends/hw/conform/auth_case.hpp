#pragma once
// The conformance suite under the job key (issue 46, docs/security.md): every case runs with
// control messages sealed (a fresh key per run unless the caller set one), and one case has a
// stranger's endpoint send the receiver's rail 0 an altered, a replayed and another job's
// control message mid-stream, which must each be refused while the stream completes intact;
// and one case has a second peer process, under another job's key, try to join the listener
// first: it must fail its own join (one line, exit 2) while the listener refuses its request,
// stays up, and then carries the right peer's stream intact.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "backends/hw/conform/peer_channel.hpp"
#include "backends/hw/conform/peer_process.hpp"
#include "backends/hw/libfabric/fabric_connection.hpp"
#include "engine/auth/job_key.hpp"
#include "engine/core/result.hpp"

namespace railcheck::conform {

// Sets RAILCHECK_JOB_KEY to a fresh random key unless a key (or RAILCHECK_JOB_AUTH) is already
// set, so the peer process inherits it. Call before starting the peer.
void ensure_job_key();
// The key both sides seal with; nullopt with RAILCHECK_JOB_AUTH=off (run_suite refuses a key
// variable it cannot use before anything runs).
std::optional<auth::JobKey> job_key();

// From a fresh endpoint of `provider` bound to `node`: three control messages to the listener
// whose handle is `handle` (its rail 0), each to be refused: one with a tag byte altered, one
// replaying the connector's first counter, one under another job's key. Returns how many left.
// It keeps its endpoint up until each send has completed or `refused` (the receiving thread's
// count of control messages refused since the injection began) says the listener took them
// all: shm completes no send to a peer that never inserted this endpoint's address (only the
// last of the three completes there), so send completions alone would wait out the deadline.
Result<int> inject_foreign_control(const std::string& provider, const std::string& node,
                                   const std::vector<std::uint8_t>& handle, const std::atomic<std::uint64_t>& refused);

// The exit code of a peer whose join failed for its key: the CLI's bad input (cli/commands.hpp).
constexpr int kExitJoinRefused = 2;

// The host's half of the wrong-key case: starts a second peer as `launch` says but under a fresh
// key of its own, sends it `join_line` ("join <handle hex>" of `listener`), and keeps the
// listener progressing until that peer has answered and exited. Returns the case's detail when
// the peer failed its own join with one line and exit 2, and the listener refused its request
// (wrong key) without failing or becoming ready; else an error saying which did not hold.
Result<std::string> run_wrong_key_peer(PeerLaunch launch, FabricConnection& listener, const std::string& join_line);

// The peer's half ("join <hex>"): connects with `options` (this process's key), waits one
// control timeout for the listener's answer, and reports. Returns the process exit code:
// kExitJoinRefused after one line on stderr and "fail <line>" to the host when it could not join.
int run_join_peer(PeerChannel& host, const FabricOptions& options, const std::vector<std::uint8_t>& handle);

}  // namespace railcheck::conform
