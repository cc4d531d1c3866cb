#pragma once
// One rank of a zero-buffer communicator, as an explicit state machine over its flag programs
// (collective_program.hpp). Sans-IO: the driver owns the memory. It executes step() (a Post, a
// Write, a Read or a Local copy) and calls step_done(), or, for a Wait, reads the flag slot and
// offers what it saw. Every call takes its epochs from the communicator's counter, one per
// phase, so a flag slot's epoch only grows and a stale value is never taken for a new one.
//
//   Idle --start(call)--> Running --last step--> Idle (calls_done + 1)
//                            |
//                            +-- a Wait not satisfied within `timeout` --> Failed (terminal)
//
// Timeout (seed §8.2): a peer that died or hangs leaves its flags where they were; the waiter
// gives up after `timeout` and fails with an error that names the peer and the flag, so a dead
// rank turns into an error on every rank that needs it (and, as those stop posting, on every
// rank that needs them) instead of a hang.
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/core/time.hpp"
#include "engine/zerobuf/collective_program.hpp"

namespace railcheck::zerobuf {

enum class RunnerState : std::uint8_t { Idle, Running, Failed };

class RankRunner {
 public:
  RankRunner(std::uint32_t rank, std::uint32_t nranks, Nanos timeout);

  // Idle -> Running with the call's program. Error: not Idle, or a call that does not fit.
  Result<std::uint64_t> start(const CollCall& call, Nanos now);
  // Running: the step to execute now.
  const FlagStep& step() const;
  // Running, the step is not a Wait: it was executed.
  void step_done();
  // Running, the step is a Wait: the driver read `observed` from the slot. True when accepted
  // (the program moves on); false while still waiting; past the deadline the rank fails.
  bool offer(std::uint64_t observed, Nanos now);
  // Running, the step is a Wait: fail it now as timed out (a driver whose own clock expired:
  // the GPU kernel, or the model checker when nothing else can move).
  void time_out(std::uint64_t observed, Nanos waited);

  RunnerState state() const { return state_; }
  std::uint32_t rank() const { return rank_; }
  std::uint32_t calls_done() const { return calls_done_; }
  std::uint64_t next_epoch() const { return next_epoch_; }
  std::size_t pc() const { return pc_; }
  const std::vector<FlagStep>& program() const { return program_; }
  const CollCall& call() const { return call_; }
  const std::optional<Error>& error() const { return error_; }

 private:
  void advance();

  std::uint32_t rank_ = 0, nranks_ = 0;
  Nanos timeout_{};
  RunnerState state_ = RunnerState::Idle;
  std::uint64_t next_epoch_ = 1;
  std::uint32_t calls_done_ = 0;
  CollCall call_;
  std::vector<FlagStep> program_;
  std::size_t pc_ = 0;
  std::optional<Nanos> wait_since_;
  std::optional<Error> error_;
};

// The error of a timed-out wait, shared with drivers that time out on their own (the kernel).
Error timeout_error(std::uint32_t rank, const CollCall& call, std::uint32_t call_no, const FlagStep& step,
                    std::size_t pc, std::size_t steps, std::uint64_t observed, Nanos waited);

}  // namespace railcheck::zerobuf
