#pragma once
// Assertions where the engine makes its state (issue 30 item 4), on in every build type. What a
// failed one does is the driver's choice, because the same engine runs everywhere:
//   Abort           print what failed and abort (the default; unit tests, `railcheck run`)
//   Record          count it and carry on: the swarm and the checker report it as a finding
//                   with the seed or trace that reproduces it
//   FailConnection  the connection whose handler tripped fails cleanly with the assertion as
//                   its reason (hardware drivers and the NCCL plugin: never abort the process)
// The mode is the process's (a driver sets it once, before any engine runs); the record of
// failures is per thread, since the checker's threads each drive their own engines.
#include <cstdint>
#include <string>

namespace railcheck {

enum class AssertionMode : std::uint8_t { Abort, Record, FailConnection };

struct AssertionFailure {
  const char* expr = "";
  const char* file = "";
  int line = 0;
  const char* why = "";
  std::string describe() const;  // "why (expr, file:line)"
};

void set_assertion_mode(AssertionMode m);
AssertionMode assertion_mode();
// Failures on this thread since it started or since the last reset, and the first of them
// (Record and FailConnection).
std::uint64_t assertion_failures();
void reset_assertion_failures();
const AssertionFailure& first_assertion_failure();
// Called by RAILCHECK_ASSERT when `expr` is false; returns false so a handler can also bail out.
bool assertion_failed(const AssertionFailure& f);

// Runs `on_failure(first failure)` when it goes out of scope if an assertion failed in between
// and the mode is FailConnection: HaConnection::handle() wraps each event in one.
template <typename OnFailure>
class AssertionFence {
 public:
  explicit AssertionFence(OnFailure on_failure) : on_failure_(on_failure), before_(assertion_failures()) {}
  ~AssertionFence() {
    if (assertion_failures() != before_ && assertion_mode() == AssertionMode::FailConnection)
      on_failure_(first_assertion_failure());
  }
  AssertionFence(const AssertionFence&) = delete;
  AssertionFence& operator=(const AssertionFence&) = delete;

 private:
  OnFailure on_failure_;
  std::uint64_t before_;
};

}  // namespace railcheck

// `why` is a string literal saying which rule broke, in the field's words.
#define RAILCHECK_ASSERT(expr, why) \
  (static_cast<bool>(expr) || ::railcheck::assertion_failed({#expr, __FILE__, __LINE__, why}))
