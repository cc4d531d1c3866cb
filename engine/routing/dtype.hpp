#pragma once
// Element types of model parameters, and the FP8 block quantization the rollout side uses.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace railcheck::routing {

enum class DType : std::uint8_t { BF16, FP8, F32 };

std::uint64_t bytes_per_element(DType t);
std::string_view to_string(DType t);
std::optional<DType> parse_dtype(std::string_view s);

// DeepSeek-V3 and Qwen3-FP8 checkpoints quantize each linear weight in 128x128 blocks with one
// F32 inverse scale per block (config.json "weight_block_size": [128, 128]).
constexpr std::uint64_t kQuantBlock = 128;
constexpr std::uint64_t blocks(std::uint64_t n) { return (n + kQuantBlock - 1) / kQuantBlock; }

std::uint64_t element_count(std::span<const std::uint64_t> shape);

}  // namespace railcheck::routing
