#pragma once
// A short, printable excerpt of untrusted input for an error message: at most `max` characters,
// every byte outside printable ASCII written as \xNN (tabs as \t), and "..." when cut. An error
// never echoes raw bytes of a file to the terminal.
#include <cstddef>
#include <string>
#include <string_view>

namespace railcheck {

inline std::string escaped_excerpt(std::string_view text, std::size_t max = 60) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t shown = 0;
  for (; shown < text.size() && out.size() < max; ++shown) {
    const auto c = static_cast<unsigned char>(text[shown]);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  if (shown < text.size()) out += "...";
  return out;
}

}  // namespace railcheck
