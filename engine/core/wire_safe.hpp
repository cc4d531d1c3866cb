#pragma once
// Compile-time proof that a type may cross a process boundary. The seed's second bug class
// (passsm-coll-p2p-divergence-analysis §"根本问题"): a proxy setup memcpy'd a whole struct,
// CUDA stream and event handles included, into the response buffer; the peer read them back
// as meaningless integers and hung on the default stream. A wire struct must hold only
// shareable fields, and `static_assert(WireSafe<T>)` next to its codec checks that it does.
//
// WireSafe<T> holds when T is, recursively:
//   * an arithmetic or enum type, std::string, std::array / C array / std::vector /
//     std::optional of WireSafe, a StrongId over a WireSafe representation;
//   * an aggregate struct (no base classes, up to 16 fields) whose every field is WireSafe.
// It fails for pointers, references, member pointers, anything marked process_local, and any
// other class (its fields cannot be inspected, so it cannot be proven safe).
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/core/ids.hpp"

namespace railcheck {

// Mark a type whose value only means something inside the process that made it: a CUDA
// stream or event, a file descriptor, a memory-region handle, a timer. Specialise to true.
template <typename T>
struct process_local : std::false_type {};

// Engine ids that name local resources (a posted WR, a protection domain, a memory region, a
// timer) — valid only in their own process.
template <>
struct process_local<WrId> : std::true_type {};
template <>
struct process_local<PdId> : std::true_type {};
template <>
struct process_local<MrId> : std::true_type {};
template <>
struct process_local<TimerId> : std::true_type {};

namespace wire_detail {

struct AnyField {
  template <typename T>
  constexpr operator T() const noexcept;  // NOLINT(google-explicit-constructor): only in unevaluated checks
};

template <typename T, std::size_t... I>
constexpr bool brace_initializable(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyField{})...}; };
}

// The field count of an aggregate: the largest N with T{f1..fN} well-formed.
template <typename T, std::size_t N = 16>
constexpr std::size_t field_count() {
  if constexpr (N == 0) {
    return 0;
  } else if constexpr (brace_initializable<T>(std::make_index_sequence<N>{})) {
    return N;
  } else {
    return field_count<T, N - 1>();
  }
}

template <typename... F>
using Fields = std::type_identity<std::tuple<std::remove_cvref_t<F>...>>;

// The field types of an aggregate, through a structured binding (decltype names each
// member's declared type). Never called; only its return type is used.
template <typename T>
auto field_types(T& t) {
  constexpr std::size_t n = field_count<T>();
  // clang-format off
  if constexpr (n == 1) { auto& [a] = t; return Fields<decltype(a)>{}; }
  else if constexpr (n == 2) { auto& [a, b] = t; return Fields<decltype(a), decltype(b)>{}; }
  else if constexpr (n == 3) { auto& [a, b, c] = t; return Fields<decltype(a), decltype(b), decltype(c)>{}; }
  else if constexpr (n == 4) { auto& [a, b, c, d] = t; return Fields<decltype(a), decltype(b), decltype(c), decltype(d)>{}; }
  else if constexpr (n == 5) { auto& [a, b, c, d, e] = t; return Fields<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e)>{}; }
  else if constexpr (n == 6) { auto& [a, b, c, d, e, f] = t; return Fields<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f)>{}; }
  else if constexpr (n == 7) { auto& [a, b, c, d, e, f, g] = t; return Fields<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f), decltype(g)>{}; }
  else if constexpr (n == 8) { auto& [a, b, c, d, e, f, g, h] = t; return Fields<decltype(a), decltype(b), decltype(c), decltype(d), decltype(e), decltype(f), decltype(g), decltype(h)>{}; }
  else { return std::type_identity<void>{}; }  // more fields than this check decomposes
  // clang-format on
}

template <typename T>
struct Safe;

template <typename Tuple>
struct AllSafe : std::false_type {};
template <typename... F>
struct AllSafe<std::tuple<F...>> : std::bool_constant<(Safe<F>::value && ...)> {};

template <typename T>
constexpr bool aggregate_safe() {
  if constexpr (!std::is_aggregate_v<T> || std::is_polymorphic_v<T>) {
    return false;
  } else {
    using FieldsOf = typename decltype(field_types(std::declval<T&>()))::type;
    return AllSafe<FieldsOf>::value;
  }
}

template <typename T>
struct Safe : std::bool_constant<!process_local<T>::value && !std::is_pointer_v<T> && !std::is_reference_v<T> &&
                                 !std::is_member_pointer_v<T> &&
                                 (std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                                  (std::is_class_v<T> && aggregate_safe<T>()))> {};
template <typename T, std::size_t N>
struct Safe<T[N]> : Safe<T> {};
template <typename T, std::size_t N>
struct Safe<std::array<T, N>> : Safe<T> {};
template <typename T>
struct Safe<std::vector<T>> : Safe<T> {};
template <typename T>
struct Safe<std::optional<T>> : Safe<T> {};
template <>
struct Safe<std::string> : std::true_type {};
template <typename Tag, typename Rep>
struct Safe<StrongId<Tag, Rep>> : std::bool_constant<!process_local<StrongId<Tag, Rep>>::value && Safe<Rep>::value> {};

}  // namespace wire_detail

template <typename T>
concept WireSafe = wire_detail::Safe<std::remove_cv_t<T>>::value;

}  // namespace railcheck
