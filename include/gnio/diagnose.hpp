// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief `gnio diagnose NAME`: the taxonomy row of an error code as it
/// shows up in gnio, and the doctor checks (and capability axes) that tell
/// its causes apart.
///
/// Only AGAIN asks for drain-then-retry; every other row says why a retry
/// loop is the wrong answer. Host only.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/capabilities.hpp"
#include "gnio/doctor.hpp"
#include "gnio/status.hpp"

namespace gnio {

/// @brief What one error code means in gnio: where it shows up, its causes,
/// what to check and whether to retry. Static text.
struct TaxonomyRow {
  Errc code = Errc::Success;  ///< The code this row describes.
  std::string_view where;     ///< The calls where it shows up in gnio.
  std::string_view causes;    ///< The likely causes.
  std::string_view check;     ///< What to check.
  std::string_view retry;     ///< Whether and how to retry.
  std::span<const std::string_view> checks;  ///< Doctor check ids that tell its causes apart.
  bool capability_axes = false;              ///< Also evaluate both capability axes.
};

/// @brief The whole taxonomy.
/// @return One row per Errc, in numeric order (Success first).
std::span<const TaxonomyRow> taxonomy() noexcept;
/// @brief The row of one code.
/// @param code The code.
/// @return Its row; the Success row for a value outside the enumeration.
const TaxonomyRow& taxonomy_row(Errc code) noexcept;
/// @brief The names `gnio diagnose` accepts, for its usage message.
/// @return "SUCCESS, NOT_SUPPORTED, INVALID_VALUE, ..." in numeric order.
std::string valid_error_names();

/// @brief A diagnosis: the row of the code, its checks run against an
/// environment, and both capability axes where the row asks for them.
struct Diagnosis {
  const TaxonomyRow* row = nullptr;      ///< The code's row (static; never nullptr after diagnose()).
  std::vector<doctor::CheckResult> checks;  ///< The row's doctor checks, in doctor::checks() order.
  std::optional<CapabilityReport> caps;  ///< Both axes, when row->capability_axes.
};

/// @brief Runs the row's checks (and the capability evaluation) against an
///        environment.
/// @param code The code to diagnose.
/// @param env The environment (doctor::Environment::real() for this machine).
/// @param req The NIC spec and GPU the user drives; the NIC axis is
///        NotQueried when no spec is named.
/// @return The diagnosis.
Diagnosis diagnose(Errc code, const doctor::Environment& env, const doctor::Request& req);
/// @brief The text `gnio diagnose` prints: the row, the checks' table and
///        the capability report where there is one.
/// @param d A diagnosis from diagnose().
/// @return Multi-line text.
std::string format_diagnosis(const Diagnosis& d);
/// @brief The JSON of a diagnosis (`"schema_version": 1`, name, code,
///        retryable, the row's text, checks, capabilities, exit_code).
/// @param d A diagnosis from diagnose().
/// @param indent Spaces per level; -1 for one line.
/// @return The JSON text.
std::string to_json(const Diagnosis& d, int indent = 2);
/// @brief The exit status of `gnio diagnose`.
/// @param d A diagnosis from diagnose().
/// @return 0 when none of the run checks FAILs, 1 otherwise.
int exit_code(const Diagnosis& d) noexcept;

}  // namespace gnio
