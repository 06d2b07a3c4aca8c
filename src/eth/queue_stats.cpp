// SPDX-License-Identifier: Apache-2.0
// Adding up the counters of several queues: every field of the counter
// lists, plus the ones written by hand.
#include "gnio/eth.hpp"

namespace gnio {

RxqStats& RxqStats::operator+=(const RxqStats& o) noexcept {
#define GNIO_RXQ_STATS_ADD(field, metric, unit, help) field += o.field;
  GNIO_RXQ_COUNTERS(GNIO_RXQ_STATS_ADD)
#undef GNIO_RXQ_STATS_ADD
  rx_missed += o.rx_missed;
  for (size_t r = 0; r < dropped.size(); ++r) dropped[r] += o.dropped[r];
  return *this;
}

TxqStats& TxqStats::operator+=(const TxqStats& o) noexcept {
#define GNIO_TXQ_STATS_ADD(field, metric, unit, help) field += o.field;
  GNIO_TXQ_COUNTERS(GNIO_TXQ_STATS_ADD)
#undef GNIO_TXQ_STATS_ADD
  for (size_t r = 0; r < dropped.size(); ++r) dropped[r] += o.dropped[r];
  errors += o.errors;
  return *this;
}

}  // namespace gnio
