#include "engine/routing/dtype.hpp"

namespace railcheck::routing {

std::uint64_t bytes_per_element(DType t) {
  switch (t) {
    case DType::BF16: return 2;
    case DType::FP8: return 1;
    case DType::F32: return 4;
  }
  return 0;
}

std::string_view to_string(DType t) {
  switch (t) {
    case DType::BF16: return "bf16";
    case DType::FP8: return "fp8";
    case DType::F32: return "f32";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : {DType::BF16, DType::FP8, DType::F32})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

std::uint64_t element_count(std::span<const std::uint64_t> shape) {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;
  return n;
}

}  // namespace railcheck::routing
