// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief The plain counters of RX and TX queues, each declared once.
///
/// Each list below generates the fields of RxqStats or TxqStats (eth.hpp),
/// the engines' atomic counters, EthRxq::stats() and EthTxq::stats(), the
/// Prometheus families of metrics::add_rxq() and metrics::add_txq(), and the
/// counter table of docs/OBSERVABILITY.md (metrics::queue_counters_markdown(),
/// compared with the file by a cpu test). A new counter is one line here and
/// its increment. Counters with a label (drops by reason) and values derived
/// from others (RxqStats::rx_missed, TxqStats::errors) are written by hand.
///
/// Each entry is `X(field, metric, unit, help)`: the field's name; the
/// Prometheus family without its `_total` suffix; `Count`, or `Nanoseconds`
/// for a time exposed as `<metric>_total` in seconds; the family's help.
#pragma once

/// @brief The RX queue's counters, in the order EthRxq::stats() reads them:
/// deliveries before offers (and the drops before both, by hand), so that a
/// reader never sees more delivered and dropped than offered.
#define GNIO_RXQ_COUNTERS(X)                                                                                \
  X(packets, "gnio_rx_packets", Count, "Frames delivered to the consumer")                                 \
  X(offered, "gnio_rx_offered", Count, "Frames the backend offered to the RX queue")                       \
  X(bytes, "gnio_rx_bytes", Count, "Bytes delivered to the consumer")                                      \
  X(bursts, "gnio_rx_bursts", Count, "Producer-index publications")                                        \
  X(truncated, "gnio_rx_truncated", Count, "Frames delivered cut to the max packet size")                   \
  X(released, "gnio_rx_released", Count, "Descriptors the consumer released")                              \
  X(errors, "gnio_rx_errors", Count, "Backend errors on the RX queue")                                     \
  X(publish_ns, "gnio_rx_publish_seconds", Nanoseconds, "Engine time spent publishing bursts") \
  X(work_polls, "gnio_rx_engine_work_polls", Count, "Engine turns on the queue that found work (wake-ups)") \
  X(idle_polls, "gnio_rx_engine_idle_polls", Count, "Engine turns on the queue that found nothing")         \
  X(busy_ns, "gnio_rx_engine_busy_seconds", Nanoseconds, "Engine time in turns on the queue that found work") \
  X(idle_ns, "gnio_rx_engine_idle_seconds", Nanoseconds,                                                   \
    "Engine time on the queue without work: empty turns and waits while no queue of its thread had any")

/// @brief The TX queue's counters.
#define GNIO_TXQ_COUNTERS(X)                                                                                  \
  X(submitted, "gnio_tx_submitted", Count, "Descriptors the device pushed (sent + dropped once completed)")  \
  X(packets, "gnio_tx_packets", Count, "Frames handed to the backend")                                     \
  X(bytes, "gnio_tx_bytes", Count, "Bytes handed to the backend")                                           \
  X(completions, "gnio_tx_completions", Count, "Completions published to the device")                       \
  X(waited_on_time, "gnio_tx_waited_on_time", Count, "Frames held for their send time")                     \
  X(copy_payloads, "gnio_tx_copy_payloads", Count, "Device-memory payloads read through the engine's pinned arena") \
  X(copies, "gnio_tx_copies", Count, "Copies of device-memory payloads into the engine's pinned arena")     \
  X(copy_bytes, "gnio_tx_copy_bytes", Count, "Bytes those copies moved, gaps between payloads included")    \
  X(copy_waits, "gnio_tx_copy_waits", Count, "Waits for a burst's payload copies")
