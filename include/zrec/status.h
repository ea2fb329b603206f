// Status and Result<T>: how every fallible call in the zrec core reports failure.
// No exception leaves the core; dependency exceptions are caught at the nearest
// boundary and turned into a Status with context (CONTRIBUTING.md, "Errors").
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace zrec {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input to create/append: schema, dtype, shape, options
  kNotFound,         // a path that should exist does not
  kMalformed,        // a store breaks a docs/format.md rule
  kIoError,          // a system call failed
  kBusy,             // the store's lifetime lock is held by another process
  kUnsupported,      // well-formed but outside what zrec handles
  kAlreadyExists,    // create over a path that holds something
  kCancelled,        // stopped on request (signal)
};

// Short lowercase name of a code, e.g. "malformed".
const char* to_string(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>". Used as errors climb
  // from the format layer (which rule broke) to the store layer (which file, which record).
  Status with_context(const std::string& context) const {
    if (is_ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status malformed(std::string m) { return {StatusCode::kMalformed, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).is_ok()); }  // NOLINT

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace zrec

#define ZREC_CONCAT_INNER_(a, b) a##b
#define ZREC_CONCAT_(a, b) ZREC_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` is not ok.
#define ZREC_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::zrec::Status zrec_status_ = (expr);           \
    if (!zrec_status_.is_ok()) return zrec_status_; \
  } while (0)

// `ZREC_ASSIGN_OR_RETURN(auto x, f());` binds the value or returns the Status.
#define ZREC_ASSIGN_OR_RETURN(lhs, expr) ZREC_ASSIGN_OR_RETURN_IMPL_(ZREC_CONCAT_(zrec_result_, __LINE__), lhs, expr)
#define ZREC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.is_ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
