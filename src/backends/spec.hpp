// SPDX-License-Identifier: Apache-2.0
// Queue-spec parsing shared by all backends: "driver:ARG,key=value,...".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gnio/status.hpp"

namespace gnio::backend {

// Whether a driver takes a positional argument before its options (a file
// for pcap, a wire name for loop).
enum class ArgMode : uint8_t { None, Optional, Required };

// The driver name: the text before the first ':' (the whole spec without one).
std::string_view spec_driver(std::string_view spec);

// A parsed spec. Getters validate one option each and name the option, its
// value and the accepted range in their errors.
class Spec {
 public:
  // Parses `text` for a driver that takes `arg` and accepts exactly the
  // option keys in `accepted`. A first field without '=' is the argument
  // (always so for ArgMode::Required, so a file name may contain '=').
  // Fields are split at commas outside double quotes: a quoted first field
  // is the argument as it stands (pcap:"a,b.pcap",loop=2) and a value may be
  // quoted (key="x,y"); inside quotes \" is a quote and \\ a backslash.
  static Result<Spec> parse(std::string_view text, ArgMode arg,
                            std::initializer_list<std::string_view> accepted);

  const std::string& text() const { return text_; }
  const std::string& driver() const { return driver_; }
  const std::string& arg() const { return arg_; }
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // A whole number in [min, max]; `def` when the option is absent.
  Result<uint64_t> u64(std::string_view key, uint64_t def, uint64_t min, uint64_t max) const;
  // A decimal number in (0, max]; 0 when absent (meaning "not set").
  Result<double> rate(std::string_view key, double max) const;
  // One of `choices`; `def` when absent.
  Result<std::string> choice(std::string_view key, std::string_view def,
                             std::initializer_list<std::string_view> choices) const;
  // The raw text of an option, or nullptr.
  const std::string* find(std::string_view key) const;

  // An InvalidValue status "<spec>: option key=value <problem>; <fix>".
  Status invalid(std::string_view key, std::string_view problem, std::string_view fix) const;

 private:
  std::string text_;
  std::string driver_;
  std::string arg_;
  std::vector<std::pair<std::string, std::string>> options_;
};

}  // namespace gnio::backend
