// FunctionRef<R(Args...)>: a non-owning reference to a callable (as C++26's std::function_ref). The
// hot path hands lambdas to the thread pool ~200 times per decode step; std::function copies a
// lambda that captures more than two references to the heap, a FunctionRef never allocates.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace ds {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  // Refers to `fn`, which must outlive every call (a lambda passed as an argument lives until the
  // end of the full expression, so run([&] { ... }) is safe).
  template <typename Fn>
    requires(!std::is_same_v<std::remove_cvref_t<Fn>, FunctionRef> && std::is_invocable_r_v<R, Fn&, Args...>)
  FunctionRef(Fn&& fn)  // NOLINT(google-explicit-constructor): converts like std::function does
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(fn)))),
        call_([](void* callable, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<Fn>*>(callable))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }

 private:
  void* callable_;
  R (*call_)(void*, Args...);
};

}  // namespace ds
