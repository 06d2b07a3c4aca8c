// SPDX-License-Identifier: Apache-2.0
// pcap:FILE[,loop=N][,pps=R] — replays a capture file (pcap or pcapng,
// read by libpcap) as one RX queue. Frames of any length the file holds are
// delivered (the ring spreads them over strides); captures of Linux cooked,
// BSD loopback and raw IP link types get a made-up Ethernet header.
#include <pcap/pcap.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

#include "backends/drivers.hpp"
#include "backends/linktype.hpp"
#include "backends/spec.hpp"

namespace gnio::backend {

namespace {

// libpcap's largest snapshot length for the link types gnio replays: no
// record of such a file is longer.
constexpr uint32_t kMaxCaptureFrame = kMaxPcapFrame;

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};
using PcapHandle = std::unique_ptr<pcap_t, PcapCloser>;

class PcapBackend final : public Backend {
 public:
  PcapBackend(std::string path, uint64_t loops, double pps, PcapHandle handle, LinkFraming framing)
      : path_(std::move(path)), loops_(loops), handle_(std::move(handle)), framing_(framing) {
    snapshot_ = static_cast<uint32_t>(std::max(pcap_snapshot(handle_.get()), 0));
    caps_.driver = "pcap";
    caps_.max_rx_queues = 1;
    caps_.max_tx_queues = 0;
    caps_.max_packet_size = max_ethernet_len(framing_, std::min(snapshot_, kMaxCaptureFrame));
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

  // Opens `path` for one pass; `framing` receives how its records become
  // Ethernet frames (an error for a link type gnio cannot replay).
  static Result<PcapHandle> open_file(const std::string& path, LinkFraming& framing) {
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    PcapHandle h(pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf));
    if (!h) {
      return Status(Errc::IoError, Layer::Backend,
                    "pcap: cannot read '" + path + "' at byte offset 0 (file header): " + errbuf +
                        "; give a pcap or pcapng capture (check it with 'capinfos " + path + "')");
    }
    auto f = link_framing(pcap_datalink(h.get()), path);
    if (!f) return f.status();
    framing = *f;
    // One seek to where the stream is lets the C library know the file
    // position from then on, so that ftell() costs no system call (it costs
    // one per call otherwise). A pipe cannot seek; its offsets read -1.
    std::fseek(pcap_file(h.get()), 0, SEEK_CUR);
    return h;
  }

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_burst(uint16_t queue, std::span<RxFrame> out) override {
    if (queue != 0) return bad_queue(queue, "RX");
    if (error_) return *error_;
    arena_.clear();
    const size_t limit = due(out.size());
    size_t n = 0;
    while (n < limit && peek()) {
      const uint32_t caplen = hdr_->caplen;
      RxFrame& f = out[n];
      f = RxFrame{};
      f.timestamp_ns = timestamp_ns();
      if (caplen == 0) {
        arena_.append(0);  // delivered as it is: the engine counts it empty
      } else if (framing_ == LinkFraming::Ethernet) {
        arena_.add(data_, caplen);
        f.len = caplen;
      } else {
        std::optional<SyntheticL2> l2 = synthetic_l2(framing_, record());
        if (!l2) {
          // Not a frame: rx_into() counts it as malformed; here it is left out.
          consume();
          continue;
        }
        f.len = max_ethernet_len(framing_, caplen);
        write_ethernet(*l2, record(), arena_.at(arena_.append(f.len)), f.len);
        f.flags = RxFrameSyntheticL2;
      }
      mark_capture_cut(f);
      consume();
      ++n;
    }
    arena_.fix_pointers(out.first(n));
    // Frames read before an error are delivered; the error comes next call.
    if (n == 0 && error_) return *error_;
    return n;
  }

  // One copy per frame: from libpcap's read buffer into the ring.
  Result<size_t> rx_into(uint16_t queue, RxSink& sink) override {
    if (queue != 0) return bad_queue(queue, "RX");
    if (error_) return *error_;
    const size_t limit = due(SIZE_MAX);
    size_t offered = 0;
    while (offered < limit && sink.room() > 0 && peek()) {
      const uint32_t caplen = hdr_->caplen;
      if (caplen == 0) {
        sink.drop(DropReason::Empty);
        consume();
        ++offered;
        continue;
      }
      std::optional<SyntheticL2> l2;
      if (framing_ != LinkFraming::Ethernet) {
        l2 = synthetic_l2(framing_, record());
        if (!l2) {
          sink.drop(DropReason::Malformed);
          consume();
          ++offered;
          continue;
        }
      }
      RxFrame f{};
      f.len = std::min(max_ethernet_len(framing_, caplen), sink.max_frame());
      uint8_t* dst = sink.claim(f.len);
      if (dst == nullptr) {
        if (!caps_.drops_when_full) break;  // kept, and offered first next time
        sink.drop(DropReason::RingFull);    // a wire does not wait for the ring
        consume();
        ++offered;
        continue;
      }
      if (l2) {
        write_ethernet(*l2, record(), dst, f.len);
        f.flags = RxFrameSyntheticL2;
      } else {
        std::memcpy(dst, data_, f.len);
      }
      mark_capture_cut(f);
      sink.commit(f.len, timestamp_ns(), f.flags, f.wire_len);
      consume();
      ++offered;
    }
    if (offered == 0 && error_) return *error_;
    return offered;
  }

  bool at_end(uint16_t queue) const override { return queue != 0 || (done_ && !have_); }

  Result<size_t> tx_burst(uint16_t, std::span<const TxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend,
                  "pcap:" + path_ +
                      " is receive-only; to record transmitted frames use 'pcap-out:FILE' or 'pcapng-out:FILE'",
                  Axis::Nic);
  }

 private:
  Status bad_queue(uint16_t queue, const char* dir) const {
    return Status(Errc::InvalidValue, Layer::Backend,
                  std::string("pcap:") + path_ + " has 1 " + dir + " queue (0); queue " + std::to_string(queue) +
                      " does not exist");
  }

  // How many records this burst may offer at most: `want`, or fewer when
  // pps= paces the replay.
  size_t due(size_t want) {
    if (!pacer_) return want;
    uint64_t due = pacer_->due();
    return due > offered_ ? static_cast<size_t>(std::min<uint64_t>(due - offered_, want)) : 0;
  }

  // Makes the next record current (hdr_, data_) unless one is; false at the
  // end of the last pass or on an error (then error_ says which).
  bool peek() {
    while (!have_ && !done_ && !error_) {
      // Error messages name the record's byte offset. In a classic file it
      // is counted; a pcapng file has blocks other than records in between.
      const long offset = classic_ ? next_offset_ : std::ftell(pcap_file(handle_.get()));
      int rc = pcap_next_ex(handle_.get(), &hdr_, &data_);
      if (rc == 1) {
        have_ = true;
        // libpcap cuts a record longer than the file's snaplen to it and
        // skips the rest, so such a record's length is not in hdr_; the
        // stream position is.
        next_offset_ = classic_ && hdr_->caplen >= snapshot_
                           ? std::ftell(pcap_file(handle_.get()))
                           : offset + kClassicRecordHeader + static_cast<long>(hdr_->caplen);
      } else if (rc == PCAP_ERROR_BREAK) {
        if (Status s = next_pass(); !s) error_ = s;
      } else {
        error_ = Status(Errc::IoError, Layer::Backend,
                        "pcap: cannot read record " + std::to_string(record_) + " at byte offset " +
                            std::to_string(offset) + " of '" + path_ + "': " + pcap_geterr(handle_.get()) +
                            "; the file is truncated or corrupt (frames before it were delivered): "
                            "re-copy or re-capture it");
      }
    }
    return have_;
  }

  // The current record is done with (delivered or counted).
  void consume() {
    have_ = false;
    ++record_;
    ++offered_;
  }

  std::span<const uint8_t> record() const { return {data_, hdr_->caplen}; }

  uint64_t timestamp_ns() const {
    // The handle was opened with nanosecond precision: tv_usec holds ns.
    return static_cast<uint64_t>(hdr_->ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(hdr_->ts.tv_usec);
  }

  // A frame shorter than it was on the wire (cut by the capture's snaplen,
  // or by the ring's max packet size) says so and keeps its wire length.
  void mark_capture_cut(RxFrame& f) const {
    const uint32_t header = link_header_len(framing_);
    const uint32_t wire =
        framing_ == LinkFraming::Ethernet || hdr_->len < header ? hdr_->len : max_ethernet_len(framing_, hdr_->len);
    if (f.len < wire) {
      f.flags |= RxFrameTruncated;
      f.wire_len = wire;
    }
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
    auto h = open_file(path_, framing_);
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
  LinkFraming framing_;
  uint32_t snapshot_ = 0;
  EthCaps caps_;
  std::optional<Pacer> pacer_;
  FrameArena arena_;
  // The current record: read from the file, not yet delivered or counted.
  // It stays current while no ring has room for it.
  bool have_ = false;
  pcap_pkthdr* hdr_ = nullptr;
  const u_char* data_ = nullptr;
  uint64_t pass_ = 0;
  uint64_t record_ = 0;   // index of the current or next record within this pass
  uint64_t offered_ = 0;  // records offered over all passes (pps= counts them)
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
                      std::filesystem::current_path(ec).string() + "'); check the path in '" + std::string(text) +
                      "'");
  }
  if (std::filesystem::is_directory(st)) {
    return Status(Errc::InvalidValue, Layer::Backend,
                  "pcap: '" + path + "' is a directory; give a capture file (pcap:FILE)");
  }
  LinkFraming framing = LinkFraming::Ethernet;
  auto handle = PcapBackend::open_file(path, framing);
  if (!handle) return handle.status();
  return std::unique_ptr<Backend>(std::make_unique<PcapBackend>(path, *loops, *pps, std::move(*handle), framing));
}

}  // namespace gnio::backend
