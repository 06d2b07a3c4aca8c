// SPDX-License-Identifier: Apache-2.0
#include "gnio/status.hpp"

#include <array>

namespace gnio {

namespace {
constexpr std::array<std::string_view, 10> kErrcNames = {
    "SUCCESS", "NOT_SUPPORTED", "INVALID_VALUE", "BAD_STATE", "AGAIN",
    "DRIVER",  "NO_MEMORY",     "IO_ERROR",      "NOT_FOUND", "TIMEOUT",
};
}  // namespace

std::string_view errc_name(Errc code) noexcept {
  auto i = static_cast<size_t>(code);
  return i < kErrcNames.size() ? kErrcNames[i] : std::string_view("UNKNOWN");
}

std::optional<Errc> errc_from_name(std::string_view name) noexcept {
  for (size_t i = 0; i < kErrcNames.size(); ++i) {
    std::string_view n = kErrcNames[i];
    if (n.size() != name.size()) continue;
    bool same = true;
    for (size_t k = 0; k < n.size() && same; ++k) {
      char c = name[k];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (c == '-') c = '_';
      same = c == n[k];
    }
    if (same) return static_cast<Errc>(i);
  }
  return std::nullopt;
}

std::string_view layer_name(Layer layer) noexcept {
  switch (layer) {
    case Layer::Eth: return "eth";
    case Layer::Gpu: return "gpu";
    case Layer::Cuda: return "cuda";
    case Layer::Backend: return "backend";
    case Layer::Engine: return "engine";
    case Layer::Kernel: return "kernel";
    case Layer::Caps: return "caps";
    case Layer::Doctor: return "doctor";
    case Layer::App: return "app";
  }
  return "unknown";
}

std::string_view axis_name(Axis axis) noexcept {
  switch (axis) {
    case Axis::None: return "none";
    case Axis::Nic: return "nic";
    case Axis::Cuda: return "cuda";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "SUCCESS";
  std::string s(errc_name(code_));
  s += " [";
  s += layer_name(layer_);
  if (axis_ != Axis::None) {
    s += ", ";
    s += axis_name(axis_);
    s += " axis";
  }
  s += "]: ";
  s += message_;
  s += " (see: gnio diagnose ";
  s += errc_name(code_);
  s += ")";
  return s;
}

}  // namespace gnio
