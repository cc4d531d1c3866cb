#pragma once
// Errors are values with context: what failed, with which input, and what to do about it.
// (g++ 12 has no std::expected, so a small Result<T> stands in.)
#include <string>
#include <utility>
#include <variant>

namespace railcheck {

struct Error {
  std::string what;  // one line: what failed and with which input
  std::string hint;  // what the user can do about it; may be empty

  std::string message() const { return hint.empty() ? what : what + " (" + hint + ")"; }
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const Error& error() const { return std::get<Error>(v_); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace railcheck
