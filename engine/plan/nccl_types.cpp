// Names and codes of NCCL's enums (see nccl_types.hpp).
#include "engine/plan/nccl_types.hpp"

#include <array>
#include <utility>

namespace railcheck::plan {
namespace {

constexpr std::array<std::string_view, 5> kCollNames = {"AllReduce", "AllGather", "ReduceScatter", "Broadcast",
                                                        "Reduce"};

struct TypeRow {
  DataType type;
  std::string_view name;
  std::uint32_t size;
  std::string_view alias;  // the short spelling, as in nccl-tests' -d option
};
constexpr std::array<TypeRow, 12> kTypes = {{
    {DataType::Int8, "int8", 1, "i8"},
    {DataType::Uint8, "uint8", 1, "u8"},
    {DataType::Int32, "int32", 4, "int"},
    {DataType::Uint32, "uint32", 4, "u32"},
    {DataType::Int64, "int64", 8, "i64"},
    {DataType::Uint64, "uint64", 8, "u64"},
    {DataType::Float16, "float16", 2, "half"},
    {DataType::Float32, "float32", 4, "float"},
    {DataType::Float64, "float64", 8, "double"},
    {DataType::Bfloat16, "bfloat16", 2, "bf16"},
    {DataType::Fp8E4M3, "fp8_e4m3", 1, "e4m3"},
    {DataType::Fp8E5M2, "fp8_e5m2", 1, "e5m2"},
}};

constexpr std::array<std::string_view, 5> kRedNames = {"sum", "prod", "max", "min", "avg"};

}  // namespace

std::string_view name(CollOp op) { return kCollNames[static_cast<std::size_t>(op)]; }
std::string_view name(DataType t) { return kTypes[static_cast<std::size_t>(t)].name; }
std::string_view name(RedOp op) { return kRedNames[static_cast<std::size_t>(op)]; }
std::uint32_t size_of(DataType t) { return kTypes[static_cast<std::size_t>(t)].size; }

std::optional<CollOp> coll_op_from_name(std::string_view s) {
  for (std::size_t i = 0; i < kCollNames.size(); ++i)
    if (kCollNames[i] == s) return static_cast<CollOp>(i);
  return std::nullopt;
}

std::optional<DataType> datatype_from_name(std::string_view s) {
  for (const auto& row : kTypes)
    if (row.name == s || row.alias == s) return row.type;
  return std::nullopt;
}

std::optional<DataType> datatype_from_code(std::int64_t code) {
  if (code < 0 || code >= static_cast<std::int64_t>(kTypes.size())) return std::nullopt;
  return static_cast<DataType>(code);
}

std::optional<RedOp> redop_from_name(std::string_view s) {
  for (std::size_t i = 0; i < kRedNames.size(); ++i)
    if (kRedNames[i] == s) return static_cast<RedOp>(i);
  return std::nullopt;
}

std::optional<RedOp> redop_from_code(std::int64_t code) {
  if (code < 0 || code >= static_cast<std::int64_t>(kRedNames.size())) return std::nullopt;
  return static_cast<RedOp>(code);
}

}  // namespace railcheck::plan
