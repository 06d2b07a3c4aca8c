// SPDX-License-Identifier: Apache-2.0
// The packet-processing application's own Prometheus families, next to the
// library's rx/tx/kernel families (metrics::add_*) on a run's /metrics.
#pragma once

#include <cstdint>

#include "gnio/metrics.hpp"

namespace gnio::app {

/// @brief Writes the application's counters `c` (counter::kCount of them,
/// as the kernel keeps them) as gnio_pp_* families labelled with `base`.
void add_app_counters(metrics::Writer& w, const uint64_t* c, const metrics::Labels& base);

struct ExportSummary;
/// @brief Writes the export's counts as gnio_pp_export_* families: per
/// collector (label collector) records sent and lost by reason, the event
/// stream's lines and losses.
void add_export_counters(metrics::Writer& w, const ExportSummary& e);

}  // namespace gnio::app
