// Errors as values: one code taxonomy (the model's), a layer, the capability
// axis at fault where there is one, and a message that says what to do.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "gnio/dev/status.hpp"

namespace gnio {

// Where the failure was detected.
enum class Layer : uint8_t { Eth, Gpu, Cuda, Backend, Engine, Kernel, Caps, Doctor, App };

// Which side of the two-axis capability question refused, if any.
enum class Axis : uint8_t { None, Nic, Cuda };

// "NOT_SUPPORTED", "INVALID_VALUE", ... : the names `gnio diagnose` accepts.
std::string_view errc_name(Errc code) noexcept;
std::optional<Errc> errc_from_name(std::string_view name) noexcept;
std::string_view layer_name(Layer layer) noexcept;
std::string_view axis_name(Axis axis) noexcept;

// Only Again asks for drain-then-retry; every other code asks for diagnosis.
constexpr bool is_retryable(Errc code) noexcept { return code == Errc::Again; }

class Status {
 public:
  Status() = default;
  Status(Errc code, Layer layer, std::string message, Axis axis = Axis::None)
      : code_(code), layer_(layer), axis_(axis), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_ok() const noexcept { return code_ == Errc::Success; }
  explicit operator bool() const noexcept { return is_ok(); }
  Errc code() const noexcept { return code_; }
  Layer layer() const noexcept { return layer_; }
  Axis axis() const noexcept { return axis_; }
  const std::string& message() const noexcept { return message_; }

  // "BAD_STATE [eth]: <message> (see: gnio diagnose BAD_STATE)"
  std::string to_string() const;

 private:
  Errc code_ = Errc::Success;
  Layer layer_ = Layer::App;
  Axis axis_ = Axis::None;
  std::string message_;
};

// Thrown only by the RAII convenience layer (Result::value()); carries the
// same Status that the value API returns.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status) : std::runtime_error(status.to_string()), status_(std::move(status)) {}
  const Status& status() const noexcept { return status_; }

 private:
  Status status_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    if (!has_value()) throw Error(std::get<1>(v_));
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!has_value()) throw Error(std::get<1>(v_));
    return std::move(std::get<0>(v_));
  }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }

  // The error; Status::ok() when there is a value.
  Status status() const { return has_value() ? Status::ok() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

// Throws gnio::Error when the status is not ok.
inline void check(const Status& s) {
  if (!s.is_ok()) throw Error(s);
}

}  // namespace gnio

#define GNIO_TRY(expr)                                  \
  do {                                                  \
    ::gnio::Status gnio_try_status_ = (expr);           \
    if (!gnio_try_status_.is_ok()) return gnio_try_status_; \
  } while (0)
