#pragma once
// Standalone GPU build only (scripts/gpu/cuda_host_proxy.sh puts this folder first on the include
// path; the CMake build never sees it). The GPU machines have the CUDA toolkit and a C++ compiler
// but no Debian -dev packages, so no libfmt. The host-proxy path and the engine's ImmCounter it
// uses format error text with fmt::format and two specs only: "{}" and "{:#x}" (also "{:x}").
// This is exactly that much of fmt, nothing else: an unknown spec prints the value as "{}" would.
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace fmt {
namespace standalone {

template <typename T>
void put(std::string& out, std::string_view spec, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
    char buf[40];
    if (spec.find('x') != std::string_view::npos)
      std::snprintf(buf, sizeof buf, "%s%llx", spec.find('#') != std::string_view::npos ? "0x" : "",
                    static_cast<unsigned long long>(v));
    else if constexpr (std::is_signed_v<T>)
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
      std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
    out += buf;
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    out += buf;
  } else {
    out += std::string_view(v);
  }
}

// Copies literal text up to the next replacement field ("{{" and "}}" are braces) and returns
// that field's spec (after ':'), or false when the format string has no field left.
inline bool next_field(std::string& out, std::string_view f, std::size_t& pos, std::string_view& spec) {
  while (pos < f.size()) {
    char c = f[pos];
    if ((c == '{' || c == '}') && pos + 1 < f.size() && f[pos + 1] == c) {
      out += c;
      pos += 2;
    } else if (c == '{') {
      std::size_t close = f.find('}', pos);
      if (close == std::string_view::npos) break;
      std::string_view field = f.substr(pos + 1, close - pos - 1);
      std::size_t colon = field.find(':');
      spec = colon == std::string_view::npos ? std::string_view{} : field.substr(colon + 1);
      pos = close + 1;
      return true;
    } else {
      out += c;
      ++pos;
    }
  }
  return false;
}

}  // namespace standalone

template <typename... Args>
std::string format(std::string_view f, const Args&... args) {
  std::string out;
  std::size_t pos = 0;
  auto one = [&](const auto& arg) {
    std::string_view spec;
    if (standalone::next_field(out, f, pos, spec)) standalone::put(out, spec, arg);
  };
  (one(args), ...);
  std::string_view spec;
  while (standalone::next_field(out, f, pos, spec)) {
  }
  return out;
}

}  // namespace fmt
