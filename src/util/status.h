// Status and Result<T>: the error type of every boundary that touches user input.
// An error carries one human-readable message that says what was expected and what was found.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "util/str_cat.h"

namespace ds {

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static Status error(std::string message) { return Status(std::move(message)); }
  template <typename... Args>
  static Status errorf(const Args&... args) {
    return Status(str_cat(args...));
  }

  bool ok() const { return !message_.has_value(); }
  const std::string& message() const {
    static const std::string kOk = "ok";
    return message_ ? *message_ : kOk;
  }
  // Prefixes context ("loading config.json: ...") while the error travels outwards.
  Status with_context(const std::string& context) const {
    return ok() ? *this : Status(context + ": " + *message_);
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(implicit): lets functions `return value;`
  Result(Status status) : value_(std::move(status)) {}  // NOLINT(implicit): `return Status::error(...)`

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status() : std::get<Status>(value_); }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace ds

#define DS_CONCAT_INNER(a, b) a##b
#define DS_CONCAT(a, b) DS_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` (a Status) is an error.
#define DS_TRY(expr)                              \
  do {                                            \
    ::ds::Status ds_try_status_ = (expr);         \
    if (!ds_try_status_.ok()) return ds_try_status_; \
  } while (0)

// `DS_ASSIGN_OR_RETURN(auto x, make_x());` declares x from a Result or returns its error.
#define DS_ASSIGN_OR_RETURN(lhs, expr) DS_ASSIGN_OR_RETURN_IMPL(DS_CONCAT(ds_result_, __LINE__), lhs, expr)
#define DS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
