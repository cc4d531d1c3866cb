#pragma once
// NCCL's operation, datatype and reduction names and codes as the 2.18-era headers define them
// (nccl.h: ncclDataType_t, ncclRedOp_t). Logs print datatype and op as these integer codes.
#include <cstdint>
#include <optional>
#include <string_view>

namespace railcheck::plan {

enum class CollOp : std::uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce };

enum class DataType : std::uint8_t {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
  Fp8E4M3 = 10,  // added in later NCCL versions; one byte each
  Fp8E5M2 = 11,
};

enum class RedOp : std::uint8_t { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4 };

std::string_view name(CollOp op);
std::string_view name(DataType t);
std::string_view name(RedOp op);
std::uint32_t size_of(DataType t);

// "AllReduce" -> CollOp::AllReduce; nullopt for anything else (Send/Recv are not collectives).
std::optional<CollOp> coll_op_from_name(std::string_view s);
// "float32", "float", "f32", "bf16", ... -> DataType.
std::optional<DataType> datatype_from_name(std::string_view s);
std::optional<DataType> datatype_from_code(std::int64_t code);
std::optional<RedOp> redop_from_name(std::string_view s);
std::optional<RedOp> redop_from_code(std::int64_t code);

}  // namespace railcheck::plan
