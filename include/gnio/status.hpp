// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief Errors as values: one code taxonomy (gnio::Errc), the layer that
/// detected the failure, the capability axis at fault where there is one,
/// and a message that says what to do.
///
/// Host calls that can fail return a Status, or a Result<T> that holds
/// either a value or the Status. The throwing forms are the convenience
/// accessors of Result (Result::value(), operator*, operator->) and check():
/// they throw gnio::Error carrying the same Status.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "gnio/dev/status.hpp"

/// @brief Everything in gnio: the host API (layers 1 to 4), capability
/// discovery and the doctor; the device API is in gnio::dev.
namespace gnio {

/// @brief The part of gnio that detected a failure (Status::layer()).
enum class Layer : uint8_t {
  Eth,      ///< Layer 1: Ethernet devices and queues (EthDevice, EthRxq, EthTxq).
  Gpu,      ///< Layers 2 and 3: the GPU context, its memory and the GPU-visible queue handles.
  Cuda,     ///< The CUDA runtime or driver.
  Backend,  ///< A queue backend (pcap, synthetic, AF_XDP, DPDK, ...).
  Engine,   ///< The host engine threads that move packets between a backend and the GPU-visible rings.
  Kernel,   ///< Layer 4: persistent kernel launch, stop and health.
  Caps,     ///< Capability discovery and snapshots.
  Doctor,   ///< The environment doctor.
  App,      ///< The application or a utility (logging, metrics, parsing of options).
};

/// @brief Which side of the two-axis capability question refused, if any
/// (Status::axis()).
enum class Axis : uint8_t {
  None,  ///< The failure is not about a capability.
  Nic,   ///< The NIC axis: what the Ethernet device behind the queue spec offers (EthCaps).
  Cuda,  ///< The CUDA axis: what the GPU, its driver and runtime offer (CudaDeviceInfo).
};

/// @brief The upper-case name of an error code, as `gnio diagnose` accepts it.
/// @param code The code.
/// @return "SUCCESS", "NOT_SUPPORTED", "INVALID_VALUE", ..., "TIMEOUT";
///         "UNKNOWN" for a value outside the enumeration.
std::string_view errc_name(Errc code) noexcept;

/// @brief The error code a name stands for, the inverse of errc_name().
/// @param name A name such as "BAD_STATE"; case-insensitive, and '-' may
///        stand for '_' ("bad-state").
/// @return The code, or std::nullopt when the name is none of errc_name()'s.
std::optional<Errc> errc_from_name(std::string_view name) noexcept;

/// @brief The lower-case name of a layer, as Status::to_string() prints it.
/// @param layer The layer.
/// @return "eth", "gpu", "cuda", "backend", "engine", "kernel", "caps",
///         "doctor" or "app"; "unknown" outside the enumeration.
std::string_view layer_name(Layer layer) noexcept;

/// @brief The lower-case name of a capability axis.
/// @param axis The axis.
/// @return "none", "nic" or "cuda"; "unknown" outside the enumeration.
std::string_view axis_name(Axis axis) noexcept;

/// @brief Whether a failure asks for a retry.
///
/// Only Errc::Again asks for drain-then-retry (drain TX completions or
/// release RX bursts, then call again); every other code asks for
/// diagnosis: the same call fails the same way.
/// @param code The code of the failure.
/// @return True for Errc::Again only.
constexpr bool is_retryable(Errc code) noexcept { return code == Errc::Again; }

/// @brief The outcome of a host call: a code, the layer that detected it,
/// the capability axis at fault and a message that names the value at
/// fault and what to do.
///
/// A default-constructed Status is success. Status is a plain value:
/// copyable, and safe to pass between threads.
class Status {
 public:
  /// @brief Success.
  Status() = default;
  /// @brief A failure (or, with Errc::Success, a success with a message).
  /// @param code What went wrong.
  /// @param layer Where it was detected.
  /// @param message What failed, with the values involved, and what to do.
  /// @param axis The capability axis that refused, for Errc::NotSupported.
  Status(Errc code, Layer layer, std::string message, Axis axis = Axis::None)
      : code_(code), layer_(layer), axis_(axis), message_(std::move(message)) {}

  /// @brief Success; the same as Status().
  /// @return A Status whose code() is Errc::Success.
  static Status ok() { return {}; }

  /// @brief Whether the call succeeded.
  /// @return True when code() is Errc::Success.
  bool is_ok() const noexcept { return code_ == Errc::Success; }
  /// @brief The same as is_ok(), so that `if (!status)` tests for failure.
  explicit operator bool() const noexcept { return is_ok(); }
  /// @brief The error code.
  /// @return Errc::Success for a success.
  Errc code() const noexcept { return code_; }
  /// @brief Where the failure was detected.
  /// @return Layer::App for a default-constructed Status.
  Layer layer() const noexcept { return layer_; }
  /// @brief The capability axis that refused.
  /// @return Axis::None unless a capability check failed.
  Axis axis() const noexcept { return axis_; }
  /// @brief The message: what failed, with the values, and what to do.
  /// @return Empty for a success made by Status() or ok().
  const std::string& message() const noexcept { return message_; }

  /// @brief The one-line form logs and error output use.
  /// @return "SUCCESS" for a success, otherwise
  ///         "BAD_STATE [eth]: <message> (see: gnio diagnose BAD_STATE)",
  ///         with ", nic axis" or ", cuda axis" after the layer when axis()
  ///         is set.
  std::string to_string() const;

 private:
  Errc code_ = Errc::Success;
  Layer layer_ = Layer::App;
  Axis axis_ = Axis::None;
  std::string message_;
};

/// @brief The exception of the throwing convenience accessors
/// (Result::value(), check()): carries the same Status that the value API
/// returns; what() is Status::to_string().
class Error : public std::runtime_error {
 public:
  /// @brief Wraps a failed status.
  /// @param status The failure; what() becomes its to_string().
  explicit Error(Status status) : std::runtime_error(status.to_string()), status_(std::move(status)) {}
  /// @brief The failure this exception carries.
  /// @return The Status it was made from.
  const Status& status() const noexcept { return status_; }

 private:
  Status status_;
};

/// @brief Either a value or the Status that says why there is none.
///
/// Returned by the host calls that produce something (Gpu::open,
/// GpuRxq::create, ...). Test it with has_value() or `if (result)`, then
/// take the value with `*result` or `result->`; those accessors throw
/// gnio::Error when there is no value, so code that prefers exceptions can
/// use them unchecked.
/// @tparam T The value type; it must be move-constructible and must not be
///         Status itself.
template <typename T>
class [[nodiscard]] Result {
 public:
  /// @brief A result holding a value.
  /// @param value The value, moved in.
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// @brief A result holding a failure.
  /// @param status Why there is no value; a success status here makes a
  ///        Result with neither value nor error, which no gnio call returns.
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  /// @brief Whether the result holds a value.
  /// @return True for a value, false for a failure.
  bool has_value() const noexcept { return v_.index() == 0; }
  /// @brief The same as has_value().
  explicit operator bool() const noexcept { return has_value(); }

  /// @brief The value.
  /// @return A reference to the value held.
  /// @throws gnio::Error carrying status() when there is no value.
  T& value() & {
    if (!has_value()) throw Error(std::get<1>(v_));
    return std::get<0>(v_);
  }
  /// @brief The value, moved out of a temporary result.
  /// @return An rvalue reference to the value held.
  /// @throws gnio::Error carrying status() when there is no value.
  T&& value() && {
    if (!has_value()) throw Error(std::get<1>(v_));
    return std::move(std::get<0>(v_));
  }
  /// @brief The same as value().
  /// @return A reference to the value held.
  /// @throws gnio::Error carrying status() when there is no value.
  T& operator*() & { return value(); }
  /// @brief The same as value() on a temporary result.
  /// @return An rvalue reference to the value held.
  /// @throws gnio::Error carrying status() when there is no value.
  T&& operator*() && { return std::move(*this).value(); }
  /// @brief Member access to the value.
  /// @return A pointer to the value held.
  /// @throws gnio::Error carrying status() when there is no value.
  T* operator->() { return &value(); }

  /// @brief The failure.
  /// @return A copy of the error; Status::ok() when there is a value.
  Status status() const { return has_value() ? Status::ok() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

/// @brief Turns a failed status into an exception.
/// @param s The status to check.
/// @throws gnio::Error carrying `s` when it is not ok.
inline void check(const Status& s) {
  if (!s.is_ok()) throw Error(s);
}

}  // namespace gnio

/// @brief Evaluates `expr` (a gnio::Status) and returns it from the
/// enclosing function when it is not ok.
///
/// For functions that return Status or a Result<T>.
/// @param expr An expression of type gnio::Status, evaluated once.
#define GNIO_TRY(expr)                                  \
  do {                                                  \
    ::gnio::Status gnio_try_status_ = (expr);           \
    if (!gnio_try_status_.is_ok()) return gnio_try_status_; \
  } while (0)
