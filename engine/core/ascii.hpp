#pragma once
// Character classes of the ASCII text railcheck parses (NCCL logs, tuning strings): unlike
// <cctype>, they ignore the locale and never see a negative char as undefined behaviour.
namespace railcheck {

constexpr bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_ascii_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace railcheck
