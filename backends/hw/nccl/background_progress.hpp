#pragma once
// Progress for comms NCCL has stopped calling (issue 42, docs/nccl-plugin.md "Completing a send
// before its ack").
//
// With manual progress (tcp;ofi_rxm, shm) bytes, acks and failovers move only inside our calls.
// Once a send completes on its local completion (staged sends), NCCL may never call that comm
// again (its op is over, the GPU waits on the peer): if the rail then dies, nothing would replay
// the staged copy and the receiver would wait forever. So one thread per plugin walks the open
// comms every `period` and progresses each one that NCCL has not called for at least `period`
// and that still owes a staged send its ack (NetComm::progress_if_idle; the receiving end of
// such a failover is driven by NCCL's next irecv, as before staging). It only ever try-locks a comm: NCCL's proxy
// thread never waits behind it for more than one progress call, and a comm NCCL drives all the time is never touched.
// Why a thread and not progress driven from NCCL's calls on other comms: at the end of a job, or while the GPU waits,
// NCCL calls no comm at all.
//
// Lock order: the registry's mutex, then (try_lock) a comm's. Registering a comm happens under the
// plugin's mutex (connect/accept), never under a comm's; remove() waits for a pass in progress,
// so a closed comm is never touched after it returns.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace railcheck::nccl {

class NetComm;

class BackgroundProgress {
 public:
  // The thread starts with the first comm added; the destructor stops and joins it.
  explicit BackgroundProgress(std::chrono::microseconds period);
  ~BackgroundProgress();
  BackgroundProgress(const BackgroundProgress&) = delete;
  BackgroundProgress& operator=(const BackgroundProgress&) = delete;

  void add(NetComm* comm);
  // After it returns the thread never touches `comm` again.
  void remove(NetComm* comm);

  // Progress calls the thread made (tests).
  std::uint64_t progressed() const;

 private:
  void run();

  const std::chrono::microseconds period_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::vector<NetComm*> comms_;
  std::uint64_t progressed_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace railcheck::nccl
