#pragma once
// Walks an NCCL log line by line and hands over the body of each "<host>:<pid>:<tid> [dev] NCCL
// INFO <body>" line with its 1-based line number; other lines (PyTorch's, WARN lines, blank) are
// passed over. The readers of INIT lines and of the TUNING table share it.
#include <cstddef>
#include <optional>
#include <string_view>

namespace railcheck::plan {

class NcclInfoLines {
 public:
  explicit NcclInfoLines(std::string_view text) : rest_(text) {}

  // The next INFO line's body, or nullopt once the text is read; lineno() is its line.
  std::optional<std::string_view> next() {
    constexpr std::string_view kInfo = " NCCL INFO ";
    while (!rest_.empty()) {
      const std::size_t nl = rest_.find('\n');
      const std::string_view line = rest_.substr(0, nl);
      rest_ = nl == std::string_view::npos ? std::string_view{} : rest_.substr(nl + 1);
      ++lineno_;
      if (const std::size_t at = line.find(kInfo); at != std::string_view::npos) return line.substr(at + kInfo.size());
    }
    return std::nullopt;
  }
  std::size_t lineno() const { return lineno_; }

 private:
  std::string_view rest_;
  std::size_t lineno_ = 0;
};

}  // namespace railcheck::plan
