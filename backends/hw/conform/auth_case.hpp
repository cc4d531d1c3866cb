#pragma once
// The conformance suite under the job key (issue 46, docs/security.md): every case runs with
// control messages sealed (a fresh key per run unless the caller set one), and one case has a
// stranger's endpoint send the receiver's rail 0 an altered, a replayed and another job's
// control message mid-stream, which must each be refused while the stream completes intact.
#include <optional>
#include <string>
#include <vector>

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
Result<int> inject_foreign_control(const std::string& provider, const std::string& node,
                                   const std::vector<std::uint8_t>& handle);

}  // namespace railcheck::conform
