#pragma once
// Integer fields of JSON input, read without undefined behaviour.
//
// nlohmann's get<T>() converts whatever number it holds with a static_cast: 1e22 read as an int is
// undefined behaviour (found by fuzz_trace), 2^40 read as a uint32_t silently truncates, and -1
// read as an unsigned wraps. json_integer<T> takes only a JSON integer that fits in T and throws
// std::out_of_range naming the key otherwise; readers catch it with their other malformed-input
// errors and report one line.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace railcheck {

template <typename T>
T json_integer(const nlohmann::json& v, std::string_view key) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (std::in_range<T>(u)) return static_cast<T>(u);
  } else if (v.is_number_integer()) {
    const auto s = v.get<std::int64_t>();
    if (std::in_range<T>(s)) return static_cast<T>(s);
  }
  throw std::out_of_range(std::string(key) + ": expected an integer in [" +
                          std::to_string(std::numeric_limits<T>::min()) + ", " +
                          std::to_string(std::numeric_limits<T>::max()) + "], got " + v.dump().substr(0, 40));
}

// The field `key` of object `j` (nlohmann's at() throws when it is missing).
template <typename T>
T json_integer_at(const nlohmann::json& j, const char* key) {
  return json_integer<T>(j.at(key), key);
}

}  // namespace railcheck
