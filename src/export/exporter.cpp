// SPDX-License-Identifier: Apache-2.0
// The Exporter: data records packed into messages of one data set per run
// of one template, numbered by the records sent before them, the templates
// and type information first on every transport that comes up, again on UDP
// every refresh interval and after the collector refused a message.
#include <algorithm>
#include <ctime>

#include "export/transport.hpp"
#include "gnio/ipfix.hpp"

namespace gnio::ipfix {

namespace {
// The options template of the type records follows the data templates.
constexpr uint16_t kTypeInfoTemplateGap = 1;

uint32_t export_time() { return static_cast<uint32_t>(std::time(nullptr)); }
}  // namespace

Exporter::Exporter() = default;
Exporter::Exporter(Exporter&&) noexcept = default;
Exporter& Exporter::operator=(Exporter&&) noexcept = default;
Exporter::~Exporter() {
  if (transport_) flush();
}

Result<Exporter> Exporter::open(const Collector& c, std::vector<Template> templates, std::vector<ElementInfo> type_info,
                                ExporterOptions options) {
  Exporter e;
  e.collector_ = c;
  e.templates_ = std::move(templates);
  e.type_info_ = std::move(type_info);
  e.options_ = options;
  Result<std::unique_ptr<Transport>> t = Status();
  if (c.transport == Collector::Transport::Udp) {
    t = open_udp(c, options);
  } else {
    // The greeting reads the exporter through this pointer, which every
    // call into the transport first points at the exporter where it now is.
    auto self = std::make_shared<Exporter*>(&e);
    e.self_ = self;
    t = open_tcp(c, options, [self] { auto m = (*self)->template_message(); return std::vector<uint8_t>(m.begin(), m.end()); },
                 e.stats_);
  }
  if (!t) return t.status();
  e.transport_ = std::move(*t);
  if (c.transport == Collector::Transport::Udp) {
    e.stats_.connects = 1;
    e.send_templates();
  }
  e.start_message();
  return e;
}

bool Exporter::connected() const { return transport_ && transport_->up(); }
bool Exporter::pending() const { return transport_ && transport_->pending(); }
void Exporter::drop_pending() {
  if (transport_) transport_->drop_pending(stats_);
}

std::span<const uint8_t> Exporter::template_message() {
  control_.begin(export_time(), sequence_, options_.observation_domain);
  write_templates(control_, templates_);
  if (!type_info_.empty()) {
    uint16_t id = 255;
    for (const Template& t : templates_) id = std::max(id, t.id);
    write_type_information(control_, static_cast<uint16_t>(id + kTypeInfoTemplateGap), type_info_);
    // Type records are data records: the sequence counts them (built means sent or counted lost).
    sequence_ += static_cast<uint32_t>(type_info_.size());
  }
  return control_.finish();
}

void Exporter::send_templates() {
  transport_->send(template_message(), 0, stats_);
  stats_.template_sends += 1;
  last_templates_ = std::chrono::steady_clock::now();
  templates_due_ = false;
}

void Exporter::start_message() {
  message_.begin(export_time(), sequence_, options_.observation_domain);
  records_in_message_ = 0;
}

void Exporter::send_current() {
  if (records_in_message_ == 0) return;
  if (self_) *self_ = this;
  if (transport_->take_refused()) templates_due_ = true;
  if (collector_.transport == Collector::Transport::Udp && options_.template_refresh.count() > 0 &&
      std::chrono::steady_clock::now() - last_templates_ >= options_.template_refresh)
    templates_due_ = true;
  if (templates_due_ && collector_.transport == Collector::Transport::Udp) send_templates();
  message_.set_sequence(sequence_);
  if (transport_->send(message_.finish(), records_in_message_, stats_))
    sequence_ += static_cast<uint32_t>(records_in_message_);
  // A refusal is seen on the send after the datagram that drew it: the
  // templates go with the next message.
  if (transport_->take_refused()) templates_due_ = true;
  start_message();
}

void Exporter::add(uint16_t template_id, std::span<const uint8_t> record) {
  if (!transport_) return;
  const size_t set_header = message_.open_set() == template_id ? 0 : 4;
  if (records_in_message_ > 0 && message_.size() + set_header + record.size() > transport_->max_message()) {
    send_current();
  }
  if (message_.open_set() != template_id) message_.begin_set(template_id);
  message_.bytes(record);
  records_in_message_ += 1;
}

void Exporter::flush() {
  if (!transport_) return;
  send_current();
}

void Exporter::poll() {
  if (!transport_) return;
  if (self_) *self_ = this;
  transport_->poll(stats_);
  if (transport_->take_refused()) templates_due_ = true;
}

}  // namespace gnio::ipfix
