#pragma once
// A callable held inline, never on the heap: what PendingQueue keeps for a post that must wait.
// A std::function holds 16 bytes inline, and a waiting write's attempt captures eight words (the
// rail, buffer, size, descriptor, immediate, remote address, key and context), so every
// -FI_EAGAIN cost an allocation: 0.9 per 64 B write_imm on shm, whose queue is shorter than the
// bench's window (docs/benchmarks.md, issue 32). Only trivially copyable callables fit (lambdas
// capturing pointers and numbers), so copying and destroying one is copying and dropping bytes.
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace railcheck::fabric {

template <typename Signature, std::size_t kBytes>
class InlineCallable;

template <typename R, typename... Args, std::size_t kBytes>
class InlineCallable<R(Args...), kBytes> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, InlineCallable>>>
  InlineCallable(F&& f) : call_(&invoke<std::decay_t<F>>) {  // NOLINT(google-explicit-constructor): a callable
    using Fn = std::decay_t<F>;
    static_assert(sizeof(Fn) <= kBytes, "the callable captures more than fits inline: capture less");
    static_assert(alignof(Fn) <= alignof(std::max_align_t), "over-aligned callable");
    static_assert(std::is_trivially_copyable_v<Fn> && std::is_trivially_destructible_v<Fn>,
                  "only callables that are plain bytes (pointers and numbers captured by value)");
    ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
  }

  R operator()(Args... args) { return call_(storage_, std::forward<Args>(args)...); }

 private:
  template <typename Fn>
  static R invoke(unsigned char* storage, Args... args) {
    return (*std::launder(reinterpret_cast<Fn*>(storage)))(std::forward<Args>(args)...);
  }

  alignas(std::max_align_t) unsigned char storage_[kBytes];
  R (*call_)(unsigned char*, Args...);
};

}  // namespace railcheck::fabric
