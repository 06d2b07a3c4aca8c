// `gnio diagnose NAME`: the taxonomy row of an error code as it shows up in
// gnio, and the doctor checks (and capability axes) that tell its causes
// apart. Only AGAIN asks for drain-then-retry; every other row says why a
// retry loop is the wrong answer.
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

struct TaxonomyRow {
  Errc code = Errc::Success;
  std::string_view where;   // where it shows up in gnio
  std::string_view causes;  // the likely causes
  std::string_view check;   // what to check
  std::string_view retry;   // whether and how to retry
  std::span<const std::string_view> checks;  // doctor check ids that disambiguate it
  bool capability_axes = false;              // also evaluate both capability axes
};

// One row per Errc, in numeric order.
std::span<const TaxonomyRow> taxonomy() noexcept;
const TaxonomyRow& taxonomy_row(Errc code) noexcept;
// "SUCCESS, NOT_SUPPORTED, INVALID_VALUE, ...": the names diagnose accepts.
std::string valid_error_names();

struct Diagnosis {
  const TaxonomyRow* row = nullptr;
  std::vector<doctor::CheckResult> checks;
  std::optional<CapabilityReport> caps;  // when row->capability_axes
};

// Runs the row's checks (and the capability evaluation) against env.
Diagnosis diagnose(Errc code, const doctor::Environment& env, const doctor::Request& req);
std::string format_diagnosis(const Diagnosis& d);
std::string to_json(const Diagnosis& d, int indent = 2);
// 0 when none of the run checks FAILs, 1 otherwise.
int exit_code(const Diagnosis& d) noexcept;

}  // namespace gnio
