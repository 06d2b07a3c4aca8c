// SPDX-License-Identifier: Apache-2.0
/// @file
/// @brief IPFIX (RFC 7011) encoding and export to a collector over UDP or TCP.
///
/// The pieces, bottom up: MessageWriter builds one message (header, sets,
/// big-endian fields); write_templates() and write_type_information() put
/// templates and the RFC 5610 type records of enterprise elements into it;
/// Exporter packs data records into messages, numbers them (RFC 7011 §3.1:
/// the sequence number counts the data records sent before the message, per
/// observation domain), sends templates when a transport comes up, again
/// after a UDP collector refused a message and every refresh interval on UDP
/// (§8.4), and counts every record it could not send by reason. Nothing
/// blocks: a send that would block is a loss (UDP) or waits in a bounded
/// queue (TCP).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/status.hpp"

namespace gnio::ipfix {

/// @brief The private enterprise number of RFC 5103's reverse elements.
inline constexpr uint32_t kReversePen = 29305;
/// @brief The enterprise number of gnio's own elements (DNS, HTTP, TLS). gnio
/// has no PEN of its own: 32473 is the one RFC 5612 reserves for documentation
/// and examples, so it never clashes with a registered vendor's elements.
inline constexpr uint32_t kGnioPen = 32473;
/// @brief A field length that says "variable" (RFC 7011 §7).
inline constexpr uint16_t kVariableLength = 65535;
/// @brief The set id of a template set (RFC 7011 §3.3.2).
inline constexpr uint16_t kTemplateSetId = 2;
/// @brief The set id of an options template set (RFC 7011 §3.3.2).
inline constexpr uint16_t kOptionsTemplateSetId = 3;

/// @brief One field specifier: element id, length, and enterprise (0: IANA).
struct Field {
  uint16_t id = 0;            ///< Information element id, without the enterprise bit.
  uint16_t length = 0;        ///< Bytes on the wire, or kVariableLength.
  uint32_t enterprise = 0;    ///< 0 for an IANA element, else its private enterprise number.
};

/// @brief Abstract data types of RFC 7012 §3.1 (the values of RFC 5610's
/// informationElementDataType).
enum class DataType : uint8_t {
  OctetArray = 0, Unsigned8 = 1, Unsigned16 = 2, Unsigned32 = 3, Unsigned64 = 4,
  Boolean = 11, String = 13, DateTimeMilliseconds = 14, Ipv4Address = 18, Ipv6Address = 19,
};
/// @brief Data type semantics of RFC 7012 §3.2 (informationElementSemantics).
enum class Semantics : uint8_t { Default = 0, Quantity = 1, TotalCounter = 2, DeltaCounter = 3, Identifier = 4, Flags = 5 };

/// @brief What RFC 5610 tells a collector about an enterprise element.
struct ElementInfo {
  uint16_t id = 0;            ///< Element id (without the enterprise bit).
  uint32_t enterprise = 0;    ///< Its enterprise number.
  DataType type = DataType::OctetArray;      ///< informationElementDataType: its abstract data type.
  Semantics semantics = Semantics::Default;  ///< informationElementSemantics: how its values are read.
  std::string_view name;      ///< informationElementName, e.g. "dnsQueryName".
  std::string_view description;  ///< informationElementDescription.
};

/// @brief A template: its id (256 or more) and fields, in record order.
struct Template {
  uint16_t id = 0;            ///< Template id, 256 or more (lower ids name set types).
  std::vector<Field> fields;  ///< Field specifiers, in the order a record holds them.
};

/// @brief Builds one IPFIX message in a byte buffer: the 16-byte header,
/// then sets; finish() writes the lengths.
class MessageWriter {
 public:
  /// @brief Starts a message (clears the buffer, no set open) and writes its
  /// 16-byte header: version 10, a length filled in by finish(), then the
  /// given fields.
  /// @param export_time_s Export time, in seconds since the Unix epoch.
  /// @param sequence Sequence number: data records sent before this message
  ///   in this observation domain (set_sequence() may change it later).
  /// @param domain Observation domain id.
  void begin(uint32_t export_time_s, uint32_t sequence, uint32_t domain);
  /// @brief Opens a set: closes the open one (writing its length), then
  /// writes the new set's 4-byte header; the open set is closed by the next
  /// begin_set() or finish().
  /// @param set_id kTemplateSetId, kOptionsTemplateSetId, or the id of the
  ///   template whose data records follow (256 or more).
  void begin_set(uint16_t set_id);
  /// @brief Appends one byte to the open set.
  /// @param v The value.
  void u8(uint8_t v);
  /// @brief Appends a 16-bit integer, big-endian, to the open set.
  /// @param v The value.
  void u16(uint16_t v);
  /// @brief Appends a 32-bit integer, big-endian, to the open set.
  /// @param v The value.
  void u32(uint32_t v);
  /// @brief Appends a 64-bit integer, big-endian, to the open set.
  /// @param v The value.
  void u64(uint64_t v);
  /// @brief Appends raw bytes, as they are, to the open set (e.g. a record
  /// built by RecordWriter).
  /// @param b The bytes to copy.
  void bytes(std::span<const uint8_t> b);
  /// @brief Appends a variable-length field: a 1-byte length below 255, else
  /// 255 and a 2-byte length (RFC 7011 §7); longer text is cut at 65535.
  /// @param text The field's content (bytes, not NUL-terminated).
  void varlen(std::string_view text);
  /// @brief Bytes written so far.
  /// @return The buffer's size in bytes, the 16-byte header included.
  size_t size() const { return buf_.size(); }
  /// @brief Closes the open set (writing its length) and writes the
  /// message length into the header.
  /// @return The whole message; it stays valid until the writer is next
  ///   changed (begin(), an append) or destroyed.
  std::span<const uint8_t> finish();
  /// @brief Overwrites the header's sequence number (the message is numbered
  /// when it is sent, by the records sent before it). Call after begin().
  /// @param sequence The new sequence number.
  void set_sequence(uint32_t sequence);
  /// @brief The set being written.
  /// @return The set id of the open set, 0 when none is open.
  uint16_t open_set() const { return set_id_; }

 private:
  void close_set();
  std::vector<uint8_t> buf_;
  size_t set_start_ = 0;
  uint16_t set_id_ = 0;
};

/// @brief Opens a template set (kTemplateSetId) in `w` and writes one
/// template record per template: its id, field count and field specifiers
/// (enterprise bit and number for enterprise fields). The set stays open.
/// @param w The message to append to; begin() must have been called.
/// @param templates The templates, written in this order.
void write_templates(MessageWriter& w, std::span<const Template> templates);
/// @brief The options template of RFC 5610's type records: scope
/// privateEnterpriseNumber (346) and informationElementId (303), then
/// informationElementDataType (339), informationElementSemantics (344),
/// informationElementUnits (345), informationElementRangeBegin (342) and
/// RangeEnd (343), informationElementName (341) and
/// informationElementDescription (340), the fields libfixbuf reads.
/// @param template_id The id to give the options template (256 or more,
///   distinct from the data templates' ids).
/// @return The template: nine IANA fields, the last two of variable length.
Template type_information_template(uint16_t template_id);
/// @brief Appends the options template set of type_information_template()
/// (two scope fields) and a data set with one type record per element of
/// `elements` (units 0, range 0..0); the data set stays open.
/// @param w The message to append to; begin() must have been called.
/// @param template_id The options template's id, also the data set's id.
/// @param elements The enterprise elements to describe, one record each.
void write_type_information(MessageWriter& w, uint16_t template_id, std::span<const ElementInfo> elements);

/// @brief Where a collector listens: udp://HOST:PORT or tcp://HOST:PORT
/// (HOST a name, an IPv4 address or [IPv6]).
struct Collector {
  /// @brief The transport protocol to the collector.
  enum class Transport : uint8_t { Udp, Tcp };
  Transport transport = Transport::Udp;  ///< UDP (udp://) or TCP (tcp://).
  std::string host;   ///< Host name or IP address, an IPv6 address without its brackets.
  uint16_t port = 0;  ///< Port, 1..65535 once parsed.
  /// @brief The collector as parse_collector() reads it.
  /// @return "udp://HOST:PORT" or "tcp://HOST:PORT", HOST in brackets when
  ///   it holds a ':' (IPv6).
  std::string text() const;
};

/// @brief Parses "udp://HOST:PORT" or "tcp://HOST:PORT" (HOST a name, an
/// IPv4 address or [IPv6]). Nothing is resolved.
/// @param url The text to parse.
/// @return The collector; or InvalidValue naming the text and the form
///   expected when the scheme is neither udp:// nor tcp://, the port is
///   missing or not 1..65535, the host is empty, or an IPv6 address lacks
///   "]:PORT".
Result<Collector> parse_collector(std::string_view url);

/// @brief Why records were not sent.
enum class LossReason : uint8_t {
  CollectorDown,     ///< No connection (refused, reset, connecting) or the UDP collector refused (ICMP unreachable).
  SocketBufferFull,  ///< The kernel's socket buffer took no more (UDP EAGAIN/ENOBUFS).
  QueueFull,         ///< The exporter's own queue (TCP, behind a collector that reads slowly) was full.
};
/// @brief The number of LossReason values (the size of ExporterStats::lost).
inline constexpr size_t kLossReasons = 3;
/// @brief The name of a loss reason, for counters and logs.
/// @param r The reason.
/// @return "collector_down", "socket_buffer_full" or "queue_full"; "unknown"
///   for a value outside the enumeration.
std::string_view loss_reason_name(LossReason r);

/// @brief What an Exporter did, counted since it opened.
struct ExporterStats {
  uint64_t records_sent = 0;     ///< Data records handed to the transport (UDP: sent; TCP: written or queued).
  uint64_t messages_sent = 0;    ///< Messages the transport took (template messages included).
  uint64_t bytes_sent = 0;       ///< Bytes of the messages counted in messages_sent.
  uint64_t template_sends = 0;   ///< Times the templates went out (each connect, refresh, after a refusal).
  uint64_t connects = 0;         ///< TCP connections made (1 + reconnects); UDP: 1.
  uint64_t backpressure = 0;     ///< TCP writes that could not finish and left bytes queued.
  std::array<uint64_t, kLossReasons> lost{};  ///< Data records not sent, by LossReason.
  /// @brief Records lost for every reason.
  /// @return The sum of `lost` over all reasons.
  uint64_t lost_total() const { return lost[0] + lost[1] + lost[2]; }
};

/// @brief How an Exporter behaves.
struct ExporterOptions {
  uint32_t observation_domain = 1;  ///< Observation domain id in every message header.
  /// @brief UDP: templates again after this long (RFC 7011 §8.4; 0: only at
  /// start and after a refusal).
  std::chrono::milliseconds template_refresh{std::chrono::seconds(60)};
  /// @brief Largest message: UDP keeps under a 1500-byte MTU; TCP may use more.
  size_t max_message_udp = 1400;
  size_t max_message_tcp = 16384;  ///< Largest message on TCP, in bytes.
  /// @brief TCP: bytes the exporter holds for a collector that reads slowly
  /// before it drops messages (LossReason::QueueFull).
  size_t tcp_queue_bytes = size_t{4} << 20;
  /// @brief TCP: wait between connection attempts.
  std::chrono::milliseconds reconnect{std::chrono::milliseconds(500)};
  /// @brief Socket send buffer to ask for (0: the system's default).
  int send_buffer = 0;
};

class Transport;

/// @brief Exports data records of a fixed set of templates to one collector.
/// Not thread-safe: one thread adds and polls.
class Exporter {
 public:
  /// @brief Opens the socket (UDP: connected, the templates sent at once;
  /// TCP: a connection attempt that waits up to a second here, else
  /// completes in poll() or is retried every options.reconnect); the
  /// templates and type information go out first on every transport that
  /// comes up.
  /// @param c The collector to send to.
  /// @param templates The data templates the records of add() use.
  /// @param type_info Enterprise elements described to the collector by
  ///   RFC 5610 type records (none sent when empty), under an options
  ///   template whose id is one above the largest template id.
  /// @param options Message sizes, refresh, queue and socket settings.
  /// @return The exporter; or IoError naming the collector when the address
  ///   does not resolve, or (UDP) no socket can be made or connected. A TCP
  ///   collector that does not accept the connection is no error: its
  ///   records count as CollectorDown until it does.
  static Result<Exporter> open(const Collector& c, std::vector<Template> templates,
                               std::vector<ElementInfo> type_info, ExporterOptions options = {});

  /// @brief An exporter that is not open: add(), flush() and poll() do nothing.
  Exporter();
  /// @brief Takes over another exporter's transport, message and counts;
  /// `other` is left not open.
  Exporter(Exporter&&) noexcept;
  /// @brief Takes over another exporter's transport, message and counts
  /// (this one's transport is closed without a flush); the other is left
  /// not open.
  /// @return This exporter.
  Exporter& operator=(Exporter&&) noexcept;
  /// @brief Sends the message being built (flush()), then closes the transport.
  ~Exporter();

  /// @brief Appends one data record to the message being built, in a data
  /// set of `template_id` (opened when the previous record had another
  /// template). When the message already holds records and this one would
  /// take it past the transport's largest message, that message is sent
  /// first. Does nothing when the exporter is not open.
  /// @param template_id The id of the record's template, one given to open().
  /// @param record The record's fields, encoded in template order (see
  ///   RecordWriter), without a set header.
  void add(uint16_t template_id, std::span<const uint8_t> record);
  /// @brief Sends the message being built, if any.
  void flush();
  /// @brief Progress without new records: TCP connects and writes what is
  /// queued; UDP refreshes templates when due.
  void poll();
  /// @brief The counts so far.
  /// @return The stats, counted since open(); the reference stays valid
  ///   while the exporter lives and is not moved.
  const ExporterStats& stats() const { return stats_; }
  /// @brief The collector this exporter sends to.
  /// @return The collector given to open().
  const Collector& collector() const { return collector_; }
  /// @brief Whether the transport is up.
  /// @return True when open and (TCP) connected; UDP: always true once open.
  bool connected() const;
  /// @brief Whether messages wait to be written (TCP, behind a slow collector).
  /// @return True when a TCP connection is up or being made and its queue
  ///   holds messages; UDP: always false.
  bool pending() const;
  /// @brief Gives up the messages still waiting (at the end of a run behind
  /// a collector that does not read): their records count as QueueFull.
  void drop_pending();

 private:
  void start_message();
  void send_current();
  void send_templates();
  std::span<const uint8_t> template_message();

  Collector collector_;
  std::vector<Template> templates_;
  std::vector<ElementInfo> type_info_;
  ExporterOptions options_;
  std::unique_ptr<Transport> transport_;
  MessageWriter message_;
  MessageWriter control_;
  uint64_t records_in_message_ = 0;
  uint32_t sequence_ = 0;
  bool templates_due_ = true;
  std::chrono::steady_clock::time_point last_templates_{};
  ExporterStats stats_;
  std::shared_ptr<Exporter*> self_;  // TCP: where the transport's greeting finds the exporter
};

/// @brief Writes a record's fields for Exporter::add(): big-endian integers,
/// bytes and variable-length text, into a buffer that is reused.
class RecordWriter {
 public:
  /// @brief Empties the buffer, to start the next record.
  void clear() { buf_.clear(); }
  /// @brief Appends one byte.
  /// @param v The value.
  void u8(uint8_t v) { buf_.push_back(v); }
  /// @brief Appends a 16-bit integer, big-endian.
  /// @param v The value.
  void u16(uint16_t v);
  /// @brief Appends a 32-bit integer, big-endian.
  /// @param v The value.
  void u32(uint32_t v);
  /// @brief Appends a 64-bit integer, big-endian.
  /// @param v The value.
  void u64(uint64_t v);
  /// @brief Appends raw bytes, as they are (e.g. an address in network order).
  /// @param p The first byte.
  /// @param n How many bytes to copy from `p`.
  void bytes(const uint8_t* p, size_t n) { buf_.insert(buf_.end(), p, p + n); }
  /// @brief A variable-length field as MessageWriter::varlen() writes it.
  /// @param text The field's content; cut at 65535 bytes.
  void varlen(std::string_view text);
  /// @brief The record's bytes.
  /// @return The bytes written since the last clear(), for Exporter::add();
  ///   valid until the writer is next changed.
  std::span<const uint8_t> data() const { return buf_; }

 private:
  std::vector<uint8_t> buf_;
};

}  // namespace gnio::ipfix
