#pragma once
// The job key from the environment a launcher (torchrun, mpirun, a scheduler) gives every rank:
//
//   RAILCHECK_JOB_KEY_FILE=<path>  the key is the file's bytes (a trailing newline is not part
//                                  of it); the file must not be readable by group or others
//   RAILCHECK_JOB_KEY=<text>       the key is the text itself (visible to the same user in
//                                  /proc/<pid>/environ; prefer the file)
//   RAILCHECK_JOB_AUTH=off         run unauthenticated: allowed, never silent (a warning is
//                                  logged by whoever uses the setting)
//
// At least 16 bytes; `openssl rand -hex 32 > key && chmod 600 key` makes a good one. The key is
// never logged: errors name the variable or the path, never the bytes.
#include <optional>
#include <string>

#include "engine/auth/job_key.hpp"
#include "engine/core/result.hpp"

namespace railcheck::hw {

constexpr const char* kJobKeyFileEnv = "RAILCHECK_JOB_KEY_FILE";
constexpr const char* kJobKeyEnv = "RAILCHECK_JOB_KEY";
constexpr const char* kJobAuthEnv = "RAILCHECK_JOB_AUTH";

struct JobKeySetting {
  std::optional<auth::JobKey> key;  // unset only when off
  bool off = false;                 // RAILCHECK_JOB_AUTH=off
  std::string source;               // "RAILCHECK_JOB_KEY_FILE=/path", "RAILCHECK_JOB_KEY", "RAILCHECK_JOB_AUTH=off"
};

// Reads the three variables. Errors: none of them set, both key variables set, a key with
// RAILCHECK_JOB_AUTH=off, an unknown RAILCHECK_JOB_AUTH value, or a bad key file.
Result<JobKeySetting> job_key_from_environment();

Result<auth::JobKey> read_job_key_file(const std::string& path);

}  // namespace railcheck::hw
