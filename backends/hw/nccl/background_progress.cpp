#include "backends/hw/nccl/background_progress.hpp"

#include <algorithm>

#include "backends/hw/nccl/net_comm.hpp"

namespace railcheck::nccl {

BackgroundProgress::BackgroundProgress(std::chrono::microseconds period) : period_(period) {}

BackgroundProgress::~BackgroundProgress() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundProgress::add(NetComm* comm) {
  std::lock_guard lock(mu_);
  comms_.push_back(comm);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void BackgroundProgress::remove(NetComm* comm) {
  std::lock_guard lock(mu_);  // waits for a pass in progress
  comms_.erase(std::remove(comms_.begin(), comms_.end(), comm), comms_.end());
}

std::uint64_t BackgroundProgress::progressed() const {
  std::lock_guard lock(mu_);
  return progressed_;
}

void BackgroundProgress::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    wake_.wait_for(lock, period_, [this] { return stop_; });
    if (stop_) break;
    const auto now = std::chrono::steady_clock::now();
    for (NetComm* c : comms_)
      if (c->progress_if_idle(now, period_)) ++progressed_;
  }
}

}  // namespace railcheck::nccl
