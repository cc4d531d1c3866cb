#pragma once
// Which sequence numbers a receiver has already taken from one sender, when messages may
// arrive out of order (control messages travel on several rails): the sliding window of
// RFC 4303 §3.4.3 (IPsec ESP's anti-replay), 64 numbers wide. A number is taken at most once;
// one more than 64 below the highest taken is refused as too old to tell.
#include <cstdint>

namespace railcheck::auth {

class ReplayWindow {
 public:
  static constexpr std::uint64_t kWidth = 64;

  // True, and remembers seq, if it was never taken and is not too old. 0 is never valid.
  bool take(std::uint64_t seq) {
    if (seq == 0) return false;
    if (seq > highest_) {
      const std::uint64_t shift = seq - highest_;
      seen_ = shift >= kWidth ? 0 : seen_ << shift;
      seen_ |= 1;  // bit k: highest_ - k was taken
      highest_ = seq;
      return true;
    }
    const std::uint64_t back = highest_ - seq;
    if (back >= kWidth) return false;
    const std::uint64_t bit = std::uint64_t{1} << back;
    if ((seen_ & bit) != 0) return false;
    seen_ |= bit;
    return true;
  }
  std::uint64_t highest() const { return highest_; }

 private:
  std::uint64_t highest_ = 0;
  std::uint64_t seen_ = 0;
};

}  // namespace railcheck::auth
