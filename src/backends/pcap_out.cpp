// SPDX-License-Identifier: Apache-2.0
// pcap-out:FILE[,snaplen=N] — records transmitted frames to a nanosecond
// pcap file through libpcap, one TX queue.
#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

namespace {

class PcapOutBackend final : public Backend {
 public:
  PcapOutBackend(std::string path, uint32_t snaplen, pcap_t* pcap, pcap_dumper_t* dumper)
      : path_(std::move(path)), snaplen_(snaplen), pcap_(pcap), dumper_(dumper) {
    caps_.driver = "pcap-out";
    caps_.max_rx_queues = 0;
    caps_.max_tx_queues = 1;
    caps_.max_packet_size = kMaxPcapFrame;  // any record libpcap writes; snaplen= only cuts what is kept
    caps_.rx_supported = false;
    caps_.rx_cyclic = false;
    caps_.rx_checksum_state = false;
    caps_.rx_timestamp = false;
    caps_.rx_rss_hash = false;
  }

  ~PcapOutBackend() override {
    pcap_dump_close(dumper_);
    pcap_close(pcap_);
  }
  PcapOutBackend(const PcapOutBackend&) = delete;
  PcapOutBackend& operator=(const PcapOutBackend&) = delete;

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_burst(uint16_t, std::span<RxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend,
                  "pcap-out:" + path_ + " is transmit-only; to replay a file use 'pcap:FILE'", Axis::Nic);
  }

  bool at_end(uint16_t) const override { return true; }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    if (queue != 0) {
      return Status(Errc::InvalidValue, Layer::Backend,
                    "pcap-out:" + path_ + " has 1 TX queue (0); queue " + std::to_string(queue) +
                        " does not exist");
    }
    for (size_t i = 0; i < frames.size(); ++i) {
      if (frames[i].len > caps_.max_packet_size) {
        return Status(Errc::InvalidValue, Layer::Backend,
                      "pcap-out:" + path_ + ": frame " + std::to_string(i) + " of the burst has " +
                          std::to_string(frames[i].len) + " bytes, more than max_packet_size " +
                          std::to_string(caps_.max_packet_size) + "; nothing of this burst was written");
      }
    }
    for (const TxFrame& f : frames) {
      pcap_pkthdr h{};
      h.ts.tv_sec = static_cast<time_t>(f.timestamp_ns / 1000000000ull);
      // With nanosecond precision libpcap stores nanoseconds in tv_usec.
      h.ts.tv_usec = static_cast<suseconds_t>(f.timestamp_ns % 1000000000ull);
      h.caplen = std::min(f.len, snaplen_);
      h.len = f.len;
      pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, f.data);
    }
    written_ += frames.size();
    if (std::ferror(pcap_dump_file(dumper_))) return write_error("writing");
    return frames.size();
  }

  Status flush() override {
    if (pcap_dump_flush(dumper_) != 0) return write_error("flushing");
    return Status::ok();
  }

 private:
  Status write_error(const char* what) const {
    return Status(Errc::IoError, Layer::Backend,
                  std::string("pcap-out: ") + what + " '" + path_ + "' failed after " + std::to_string(written_) +
                      " frames: " + std::strerror(errno) + "; check free space and permissions");
  }

  std::string path_;
  uint32_t snaplen_;
  pcap_t* pcap_;
  pcap_dumper_t* dumper_;
  EthCaps caps_;
  uint64_t written_ = 0;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_pcap_out(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::Required, {"snaplen"});
  if (!spec) return spec.status();
  auto snaplen = spec->u64("snaplen", kMaxPcapFrame, 64, kMaxPcapFrame);
  if (!snaplen) return snaplen.status();
  const std::string& path = spec->arg();

  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return Status(Errc::IoError, Layer::Backend,
                  "pcap-out: cannot create '" + path + "': directory '" + dir.string() +
                      "' does not exist; create it first or write elsewhere");
  }
  pcap_t* pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(*snaplen),
                                                      PCAP_TSTAMP_PRECISION_NANO);
  if (pcap == nullptr) {
    return Status(Errc::NoMemory, Layer::Backend, "pcap-out: libpcap could not allocate a handle for '" + path + "'");
  }
  pcap_dumper_t* dumper = pcap_dump_open(pcap, path.c_str());
  if (dumper == nullptr) {
    Status s(Errc::IoError, Layer::Backend,
             "pcap-out: cannot create '" + path + "': " + pcap_geterr(pcap) + "; check the path and permissions");
    pcap_close(pcap);
    return s;
  }
  return std::unique_ptr<Backend>(
      std::make_unique<PcapOutBackend>(path, static_cast<uint32_t>(*snaplen), pcap, dumper));
}

}  // namespace gnio::backend
