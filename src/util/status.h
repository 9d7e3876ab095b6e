// Status and Result<T>: the error type of every boundary that touches user input.
// An error carries one human-readable message that says what was expected and what was found, and
// a kind (invalid argument, not found, overloaded, ...) that callers branch on instead of the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "util/str_cat.h"

namespace ds {

// What went wrong, for callers that react differently (the server maps each kind to one HTTP
// status). `invalid_argument` is the default: most errors are bad input (files, flags, bodies).
enum class ErrorKind : uint8_t {
  invalid_argument,  // the input is wrong; retrying the same input fails again
  not_found,         // a named thing (model, file, route) does not exist
  overloaded,        // no capacity now; the same input may succeed later
  unavailable,       // not serving (loading, shutting down)
  internal,          // a bug or an unexpected failure of ours
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static Status error(std::string message) { return Status(ErrorKind::invalid_argument, std::move(message)); }
  static Status error(ErrorKind kind, std::string message) { return Status(kind, std::move(message)); }
  template <typename... Args>
  static Status errorf(const Args&... args) {
    return Status(ErrorKind::invalid_argument, str_cat(args...));
  }
  template <typename... Args>
  static Status not_found(const Args&... args) {
    return Status(ErrorKind::not_found, str_cat(args...));
  }
  template <typename... Args>
  static Status overloaded(const Args&... args) {
    return Status(ErrorKind::overloaded, str_cat(args...));
  }
  template <typename... Args>
  static Status unavailable(const Args&... args) {
    return Status(ErrorKind::unavailable, str_cat(args...));
  }
  template <typename... Args>
  static Status internal(const Args&... args) {
    return Status(ErrorKind::internal, str_cat(args...));
  }

  bool ok() const { return !message_.has_value(); }
  // Meaningful only for an error.
  ErrorKind kind() const { return kind_; }
  const std::string& message() const {
    static const std::string kOk = "ok";
    return message_ ? *message_ : kOk;
  }
  // Prefixes context ("loading config.json: ...") while the error travels outwards; keeps the kind.
  Status with_context(const std::string& context) const {
    return ok() ? *this : Status(kind_, context + ": " + *message_);
  }

 private:
  Status(ErrorKind kind, std::string message) : message_(std::move(message)), kind_(kind) {}
  std::optional<std::string> message_;
  ErrorKind kind_ = ErrorKind::invalid_argument;
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
