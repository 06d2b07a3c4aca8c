// pcap:FILE[,loop=N][,pps=R] — replays a capture file (pcap or pcapng,
// read by libpcap) as one RX queue.
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "backends/drivers.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

namespace {

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
using PcapHandle = std::unique_ptr<pcap_t, PcapCloser>;

class PcapBackend final : public Backend {
 public:
  PcapBackend(std::string path, uint64_t loops, double pps, PcapHandle handle)
      : path_(std::move(path)), loops_(loops), handle_(std::move(handle)) {
    caps_.driver = "pcap";
    caps_.max_rx_queues = 1;
    caps_.max_tx_queues = 0;
    caps_.max_packet_size = kMaxFrameSize;
    caps_.tx_supported = false;
    caps_.tx_regular = false;
    caps_.tx_wait_on_time = false;
    caps_.drops_when_full = pps > 0;
    if (pps > 0) pacer_.emplace(pps);
  }

  // Whether `path` is a classic pcap file: a 24-byte file header, then
  // records of a 16-byte header and the captured bytes (either byte order,
  // micro- or nanosecond timestamps).
  static bool classic_layout(const std::string& path) {
    uint32_t magic = 0;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      if (std::fread(&magic, sizeof(magic), 1, f) != 1) magic = 0;
      std::fclose(f);
    }
    for (uint32_t m : {0xa1b2c3d4u, 0xd4c3b2a1u, 0xa1b23c4du, 0x4d3cb2a1u})
      if (magic == m) return true;
    return false;
  }

  // Opens `path` for one pass and checks that it holds Ethernet frames.
  static Result<PcapHandle> open_file(const std::string& path) {
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    PcapHandle h(pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf));
    if (!h) {
      return Status(Errc::IoError, Layer::Backend,
                    "pcap: cannot read '" + path + "' at byte offset 0 (file header): " + errbuf +
                        "; give a pcap or pcapng capture (check it with 'capinfos " + path + "')");
    }
    int dlt = pcap_datalink(h.get());
    if (dlt != DLT_EN10MB) {
      const char* name = pcap_datalink_val_to_name(dlt);
      const char* desc = pcap_datalink_val_to_description(dlt);
      return Status(Errc::InvalidValue, Layer::Backend,
                    "pcap: '" + path + "' has link type " + (name ? name : std::to_string(dlt)) + " (" +
                        (desc ? desc : "unknown") +
                        "), not EN10MB (Ethernet); gnio replays Ethernet frames only: capture on an "
                        "Ethernet or loopback interface");
    }
    return h;
  }

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override {
    if (queue != 0) return bad_queue(queue, "RX");
    if (error_) return *error_;
    arena_.clear();
    size_t limit = out.size();
    if (pacer_) {
      uint64_t due = pacer_->due();
      limit = due > delivered_ ? static_cast<size_t>(std::min<uint64_t>(due - delivered_, limit)) : 0;
    }
    size_t n = 0;
    while (n < limit && !done_) {
      // Error messages name the record's byte offset. In a classic file it
      // is counted; ftell() would cost a system call per record.
      const long offset = classic_ ? next_offset_ : std::ftell(pcap_file(handle_.get()));
      pcap_pkthdr* hdr = nullptr;
      const u_char* data = nullptr;
      int rc = pcap_next_ex(handle_.get(), &hdr, &data);
      if (rc == 1) {
        if (hdr->caplen > caps_.max_packet_size) {
          error_ = Status(Errc::InvalidValue, Layer::Backend,
                          "pcap: record " + std::to_string(record_) + " (byte offset " + std::to_string(offset) +
                              ") of '" + path_ + "' is a frame of " + std::to_string(hdr->caplen) +
                              " bytes, more than max_packet_size " + std::to_string(caps_.max_packet_size) +
                              "; cut the capture's frames (editcap -s " + std::to_string(caps_.max_packet_size) +
                              ") or capture with a smaller MTU");
          break;
        }
        next_offset_ = offset + kClassicRecordHeader + static_cast<long>(hdr->caplen);
        arena_.add(data, hdr->caplen);
        out[n].len = hdr->caplen;
        out[n].timestamp_ns = static_cast<uint64_t>(hdr->ts.tv_sec) * 1000000000ull +
                              static_cast<uint64_t>(hdr->ts.tv_usec);
        ++n;
        ++record_;
        ++delivered_;
      } else if (rc == PCAP_ERROR_BREAK) {
        Status s = next_pass();
        if (!s) {
          error_ = s;
          break;
        }
      } else {
        error_ = Status(Errc::IoError, Layer::Backend,
                        "pcap: cannot read record " + std::to_string(record_) + " at byte offset " +
                            std::to_string(offset) + " of '" + path_ + "': " + pcap_geterr(handle_.get()) +
                            "; the file is truncated or corrupt (frames before it were delivered): "
                            "re-copy or re-capture it");
        break;
      }
    }
    arena_.fix_pointers(out.first(n));
    // Frames read before an error are delivered; the error comes next call.
    if (n == 0 && error_) return *error_;
    return n;
  }

  bool at_end(uint16_t queue) const override { return queue != 0 || done_; }

  Result<size_t> tx_burst(uint16_t, std::span<const TxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend,
                  "pcap:" + path_ + " is receive-only; to record transmitted frames use 'pcap-out:FILE'",
                  Axis::Nic);
  }

 private:
  Status bad_queue(uint16_t queue, const char* dir) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  std::string("pcap:") + path_ + " has 1 " + dir + " queue (0); queue " + std::to_string(queue) +
                      " does not exist");
  }

  // End of one pass through the file: start the next one, or finish.
  Status next_pass() {
    ++pass_;
    // A file without records would otherwise loop forever.
    if ((loops_ != 0 && pass_ >= loops_) || record_ == 0) {
      done_ = true;
      return Status::ok();
    }
    record_ = 0;
    next_offset_ = kClassicFileHeader;
    handle_.reset();
    auto h = open_file(path_);
    if (!h) return h.status();
    handle_ = std::move(*h);
    return Status::ok();
  }

  static constexpr long kClassicFileHeader = 24;
  static constexpr long kClassicRecordHeader = 16;

  std::string path_;
  bool classic_ = classic_layout(path_);
  long next_offset_ = kClassicFileHeader;  // of the next record, in a classic file
  uint64_t loops_;  // passes in total; 0 = forever
  PcapHandle handle_;
  EthCaps caps_;
  std::optional<Pacer> pacer_;
  FrameArena arena_;
  uint64_t pass_ = 0;
  uint64_t record_ = 0;     // index of the next record within this pass
  uint64_t delivered_ = 0;  // frames delivered over all passes
  bool done_ = false;
  std::optional<Status> error_;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_pcap(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::Required, {"loop", "pps"});
  if (!spec) return spec.status();
  auto loops = spec->u64("loop", 1, 0, UINT32_MAX);
  if (!loops) return loops.status();
  auto pps = spec->rate("pps", kMaxPps);
  if (!pps) return pps.status();

  const std::string& path = spec->arg();
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) {
    return Status(Errc::NotFound, Layer::Backend,
                  "pcap: capture file '" + path + "' does not exist (working directory '" +
                      std::filesystem::current_path(ec).string() + "'); check the path in '" + std::string(text) + "'");
  }
  if (std::filesystem::is_directory(st)) {
    return Status(Errc::InvalidValue, Layer::Backend,
                  "pcap: '" + path + "' is a directory; give a capture file (pcap:FILE)");
  }
  auto handle = PcapBackend::open_file(path);
  if (!handle) return handle.status();
  return std::unique_ptr<Backend>(std::make_unique<PcapBackend>(path, *loops, *pps, std::move(*handle)));
}

}  // namespace gnio::backend
