// SPDX-License-Identifier: Apache-2.0
// pcapng-out:FILE[,snaplen=N][,queues=Q][,rxqs=R][,rotate=SIZE|DURATION][,files=N] —
// records transmitted frames to pcapng files: an interface per TX queue,
// nanosecond Enhanced Packet Blocks marked outbound, and each interface's
// statistics when a file closes. With rxqs=R the file is a capture of
// received frames (`gnio run --capture`): an interface per RX queue
// (rxq0...), and each frame's interface, timestamp, epb_flags and length
// are those the kernel recorded with it (TxFrame::captured). rotate= starts a new file (FILE, FILE.1,
// FILE.2, ...; with files=N, FILE to FILE.(N-1) reused in turn, as tcpdump
// -W does) before one would outgrow SIZE or once a frame comes DURATION
// after the file's first; every file is a whole pcapng of its own.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "backends/drivers.hpp"
#include "backends/pcapng_format.hpp"
#include "backends/spec.hpp"
#include "core/log.hpp"

namespace gnio::backend {

namespace {

constexpr uint64_t kMaxQueues = 64;
constexpr uint64_t kMaxFiles = 1000000;
constexpr uint64_t kMinRotateBytes = 1024;
constexpr std::string_view kApplication = "gnio pcapng-out";
// The statistics of a TX interface, which pcapng defines for receiving.
constexpr std::string_view kStatisticsComment =
    "TX queue: ifrecv = frames handed to pcapng-out, ifdrop = frames it could not write, usrdeliv = frames written";
constexpr std::string_view kCaptureStatisticsComment =
    "RX queue: ifrecv = captured frames handed to pcapng-out, ifdrop = frames it could not write, usrdeliv = frames "
    "written (frames the kernel could not hand over are in gnio's report, capture.dropped)";

struct Rotation {
  uint64_t bytes = 0;        // a file is closed before it would outgrow this; 0: no limit
  uint64_t duration_ns = 0;  // a frame this long after the file's first starts the next; 0: no limit
  uint64_t files = 0;        // file names reused in turn; 0: a new name for every file
};

struct Options {
  std::string path;
  uint32_t snaplen = kMaxPcapFrame;
  uint16_t queues = 1;
  uint16_t rx_queues = 0;  // rxqs=: a capture of this many RX queues; 0: interfaces are the TX queues
  Rotation rotation;
};

// rotate=SIZE (bytes; K, M, G: KiB, MiB, GiB) or rotate=DURATION (ms, s, min, h).
Result<Rotation> parse_rotation(const Spec& spec) {
  Rotation r;
  auto files = spec.u64("files", 0, 1, kMaxFiles);
  if (!files) return files.status();
  r.files = *files;
  const std::string* v = spec.find("rotate");
  if (v == nullptr) {
    if (spec.has("files"))
      return spec.invalid("files", "needs rotate=",
                          "add rotate=SIZE or rotate=DURATION (rotate=100M, rotate=60s), or leave files= out");
    return r;
  }
  const std::string fix =
      "use rotate=SIZE (bytes, or with K, M, G for KiB, MiB, GiB: rotate=500M) or rotate=DURATION (with ms, s, "
      "min, h: rotate=60s)";
  uint64_t n = 0;
  const char* end = v->data() + v->size();
  auto [unit_at, ec] = std::from_chars(v->data(), end, n);
  if (ec == std::errc::result_out_of_range) return spec.invalid("rotate", "is out of range", fix);
  if (ec != std::errc()) return spec.invalid("rotate", "does not start with a whole number", fix);
  const std::string_view unit(unit_at, static_cast<size_t>(end - unit_at));
  const std::string number(v->data(), unit_at);
  if (!unit.empty() && (unit[0] == '.' || unit[0] == ','))
    return spec.invalid("rotate", "is not a whole number", fix);
  if (unit == "m")
    return spec.invalid("rotate", "is ambiguous",
                        "write rotate=" + number + "min for minutes or rotate=" + number + "M for MiB");
  struct Unit {
    std::string_view name;
    uint64_t scale;
    bool time;
  };
  static constexpr Unit kUnits[] = {
      {"", 1, false},           {"K", 1ull << 10, false},      {"k", 1ull << 10, false},
      {"KiB", 1ull << 10, false}, {"M", 1ull << 20, false},    {"MiB", 1ull << 20, false},
      {"G", 1ull << 30, false}, {"g", 1ull << 30, false},      {"GiB", 1ull << 30, false},
      {"ms", 1000000ull, true}, {"s", 1000000000ull, true},    {"min", 60000000000ull, true},
      {"h", 3600000000000ull, true},
  };
  const Unit* u = nullptr;
  for (const Unit& c : kUnits)
    if (c.name == unit) u = &c;
  if (u == nullptr) return spec.invalid("rotate", "has an unknown unit '" + std::string(unit) + "'", fix);
  if (n == 0) return spec.invalid("rotate", "is zero", fix + "; leave rotate= out to write one file");
  if (n > UINT64_MAX / u->scale) return spec.invalid("rotate", "is out of range", fix);
  if (u->time) {
    r.duration_ns = n * u->scale;
  } else {
    r.bytes = n * u->scale;
    if (r.bytes < kMinRotateBytes)
      return spec.invalid("rotate", "is under 1 KiB",
                          "a file holds its headers and at least one frame: use rotate=1K or more");
  }
  return r;
}

// What a failed open or write calls for, by its errno.
std::string advice(int err, const std::string& path) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return "free space (or raise the quota) on its file system, or point FILE elsewhere";
    case EFBIG:
      return "the file reached the largest size allowed (ulimit -f, or the file system's): rotate with rotate=SIZE";
    case EACCES:
    case EPERM:
    case EROFS:
      return "write where you have permission, or change the permissions";
    case ENOENT: {
      const std::string dir = std::filesystem::path(path).parent_path().string();
      return "directory '" + (dir.empty() ? std::string(".") : dir) +
             "' does not exist: create it first or point FILE elsewhere";
    }
    case EISDIR:
      return "it is a directory: name a file";
    default:
      return "check the path and the device it is on";
  }
}

// The counts of one interface (a TX queue, or an RX queue of a capture) since the capture started.
struct QueueCounts {
  uint64_t offered = 0;     // handed to tx_burst(): written or dropped
  uint64_t written = 0;
  uint64_t dropped = 0;     // could not be written
  uint64_t since_last = 0;  // dropped since the queue's last written frame: that next frame's epb_dropcount
};

class PcapngOutBackend final : public Backend {
 public:
  explicit PcapngOutBackend(Options o)
      : opt_(std::move(o)),
        start_ns_(realtime_ns()),
        interfaces_(opt_.rx_queues != 0 ? opt_.rx_queues : opt_.queues),
        counts_(interfaces_),
        dropcount_used_(interfaces_) {
    caps_.driver = "pcapng-out";
    caps_.max_rx_queues = 0;
    caps_.max_tx_queues = opt_.queues;
    caps_.max_packet_size = kMaxPcapFrame;  // as pcap-out; snaplen= only cuts what is kept
    caps_.rx_supported = false;
    caps_.rx_cyclic = false;
    caps_.rx_checksum_state = false;
    caps_.rx_timestamp = false;
    caps_.rx_rss_hash = false;
    for (uint16_t q = 0; q < interfaces_; ++q) {
      if (capture()) {
        names_.push_back("rxq" + std::to_string(q));
        descriptions_.push_back("gnio RX queue " + std::to_string(q) + " captured to pcapng-out:" + opt_.path);
      } else {
        names_.push_back("txq" + std::to_string(q));
        descriptions_.push_back("gnio TX queue " + std::to_string(q) + " of pcapng-out:" + opt_.path);
      }
    }
    std::vector<uint8_t> isbs;
    append_statistics(isbs);
    statistics_bytes_ = isbs.size();
  }

  ~PcapngOutBackend() override {
    std::lock_guard lock(mu_);
    if (Status s = close_file(); !s) log::error("pcapng-out", s.message());
  }
  PcapngOutBackend(const PcapngOutBackend&) = delete;
  PcapngOutBackend& operator=(const PcapngOutBackend&) = delete;

  // Opens FILE, the capture's first file.
  Status open_first() {
    std::lock_guard lock(mu_);
    return open_file();
  }

  const EthCaps& caps() const override { return caps_; }

  Result<size_t> rx_burst(uint16_t, std::span<RxFrame>) override {
    return Status(Errc::NotSupported, Layer::Backend,
                  "pcapng-out:" + opt_.path + " is transmit-only; to replay a file use 'pcap:FILE'", Axis::Nic);
  }

  bool at_end(uint16_t) const override { return true; }

  Result<size_t> tx_burst(uint16_t queue, std::span<const TxFrame> frames) override {
    if (queue >= opt_.queues) {
      return Status(Errc::InvalidValue, Layer::Backend,
                    "pcapng-out:" + opt_.path + " has " + std::to_string(opt_.queues) + " TX queue(s) (0.." +
                        std::to_string(opt_.queues - 1) + "); queue " + std::to_string(queue) +
                        " does not exist; add queues=N to the spec for more");
    }
    for (size_t i = 0; i < frames.size(); ++i) {
      if (capture() && frames[i].rx_queue >= opt_.rx_queues) {
        return Status(Errc::InvalidValue, Layer::Backend,
                      "pcapng-out:" + opt_.path + ": frame " + std::to_string(i) + " of the burst was captured on RX "
                      "queue " + std::to_string(frames[i].rx_queue) + ", but the file has interfaces for rxqs=" +
                          std::to_string(opt_.rx_queues) + "; nothing of this burst was written; raise rxqs=");
      }
      if (frames[i].len > caps_.max_packet_size) {
        return Status(Errc::InvalidValue, Layer::Backend,
                      "pcapng-out:" + opt_.path + ": frame " + std::to_string(i) + " of the burst has " +
                          std::to_string(frames[i].len) + " bytes, more than max_packet_size " +
                          std::to_string(caps_.max_packet_size) + "; nothing of this burst was written");
      }
    }
    std::lock_guard lock(mu_);
    const uint64_t now = realtime_ns();
    size_t done = 0;
    while (done < frames.size()) {
      Result<size_t> n = write_frames(queue, frames.subspan(done), now);
      if (!n) {
        // Only frames of a failed call are counted dropped: the caller
        // offers the rest of this burst again and gets the error then.
        if (done > 0) return done;
        for (const TxFrame& f : frames) {
          QueueCounts& c = counts_[interface_of(queue, f)];
          c.offered += 1;
          c.dropped += 1;
          c.since_last += 1;
        }
        defer(n.status(), frames.size());
        return n.status();
      }
      done += *n;
    }
    return done;
  }

  // Files are written with write(2) per burst, so everything accepted is
  // visible already; what flush() adds is the errors since the last flush.
  Status flush() override {
    std::lock_guard lock(mu_);
    if (deferred_.is_ok()) return Status::ok();
    std::string dropped;
    if (deferred_drops_ > 0)
      dropped = " (" + std::to_string(deferred_drops_) +
                " frame(s) dropped since the last flush, counted as dropped(backend_error))";
    Status s(deferred_.code(), Layer::Backend, deferred_.message() + dropped);
    deferred_ = Status::ok();
    deferred_drops_ = 0;
    return s;
  }

 private:
  bool capture() const { return opt_.rx_queues != 0; }
  // The interface a frame is written on: its RX queue in a capture, else the TX queue.
  uint16_t interface_of(uint16_t queue, const TxFrame& f) const { return capture() ? f.rx_queue : queue; }

  std::string file_name(uint64_t index) const {
    const uint64_t slot = opt_.rotation.files ? index % opt_.rotation.files : index;
    return slot == 0 ? opt_.path : opt_.path + "." + std::to_string(slot);
  }

  void append_header(std::vector<uint8_t>& out) const {
    pcapng::append_section_header(out, kApplication);
    for (uint16_t q = 0; q < interfaces_; ++q)
      pcapng::append_interface(out, {names_[q], descriptions_[q], opt_.snaplen});
  }

  void append_statistics(std::vector<uint8_t>& out) const {
    const uint64_t now = realtime_ns();
    for (uint16_t q = 0; q < interfaces_; ++q) {
      const QueueCounts& c = counts_[q];
      pcapng::append_statistics(out, {q, start_ns_, now, c.offered, c.dropped, c.written,
                                      capture() ? kCaptureStatisticsComment : kStatisticsComment});
    }
  }

  // Opens file number index_ for writing; its blocks start with the next write.
  Status open_file() {
    path_ = file_name(index_);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      const int err = errno;
      return Status(Errc::IoError, Layer::Backend,
                    "pcapng-out: cannot open '" + path_ + "' for writing: " + std::strerror(err) + "; " +
                        advice(err, path_));
    }
    bytes_ = 0;
    packets_ = 0;
    header_pending_ = true;
    broken_.clear();
    return Status::ok();
  }

  // Ends the open file with each interface's statistics (and, if nothing
  // was written yet, its headers, so that it is a whole capture) and closes it.
  Status close_file() {
    if (fd_ < 0) return Status::ok();
    Status result;
    if (broken_.empty()) {
      buf_.clear();
      const bool empty = header_pending_;
      if (empty) append_header(buf_);
      append_statistics(buf_);
      if (const int err = write_buffer(); err != 0)
        result = Status(Errc::IoError, Layer::Backend,
                        "pcapng-out: writing the interface statistics at the close of '" + path_ +
                            "' failed: " + std::strerror(err) + "; " +
                            (empty ? std::string("the file is left empty")
                                   : "the file holds its " + std::to_string(packets_) + " frames without them") +
                            "; " + advice(err, path_));
    }
    if (::close(fd_) != 0 && result) {
      const int err = errno;
      result = Status(Errc::IoError, Layer::Backend,
                      "pcapng-out: closing '" + path_ + "' failed: " + std::strerror(err) + "; " + advice(err, path_));
    }
    fd_ = -1;
    return result;
  }

  bool rotation_due(uint64_t bytes_after, uint64_t timestamp_ns, uint64_t first_ns) const {
    const Rotation& r = opt_.rotation;
    return (r.bytes != 0 && bytes_after + statistics_bytes_ > r.bytes) ||
           (r.duration_ns != 0 && timestamp_ns >= first_ns && timestamp_ns - first_ns >= r.duration_ns);
  }

  // Closes the file and opens the next one; a close that failed is
  // reported by flush(), an open that failed to the caller.
  Status next_file() {
    if (Status s = close_file(); !s) defer(s, 0);
    ++index_;
    return open_file();
  }

  // Writes frames of one queue up to the next rotation (at least one) in one
  // write(2); returns how many. The file is left as it was on an error.
  Result<size_t> write_frames(uint16_t queue, std::span<const TxFrame> frames, uint64_t now) {
    const bool rotating = opt_.rotation.bytes != 0 || opt_.rotation.duration_ns != 0;
    if (fd_ >= 0 && !broken_.empty()) {
      if (!rotating) return Status(Errc::IoError, Layer::Backend, broken_);
      if (Status s = next_file(); !s) return s;
    } else if (fd_ < 0) {
      // The open that a rotation needed failed: try again.
      if (Status s = open_file(); !s) return s;
    }
    auto stamp = [now](const TxFrame& f) { return f.timestamp_ns != 0 ? f.timestamp_ns : now; };
    auto captured = [this](const TxFrame& f) { return std::min(f.len, opt_.snaplen); };
    auto original = [](const TxFrame& f) { return f.captured ? std::max(f.len, f.original_len) : f.len; };
    auto flags = [](const TxFrame& f) { return f.captured ? f.epb_flags : pcapng::kFlagsOutbound; };
    const uint64_t first_drops = counts_[interface_of(queue, frames[0])].since_last;
    if (packets_ > 0 &&
        rotation_due(bytes_ + pcapng::packet_block_size(captured(frames[0]), first_drops != 0), stamp(frames[0]),
                     first_ns_)) {
      if (Status s = next_file(); !s) return s;
    }
    buf_.clear();
    if (header_pending_) append_header(buf_);
    const uint64_t first_ns = packets_ > 0 ? first_ns_ : stamp(frames[0]);
    // epb_dropcount goes on the first frame of each interface in this write.
    std::fill(dropcount_used_.begin(), dropcount_used_.end(), false);
    size_t n = 0;
    for (; n < frames.size(); ++n) {
      const TxFrame& f = frames[n];
      const uint16_t iface = interface_of(queue, f);
      const uint64_t dropcount = dropcount_used_[iface] ? 0 : counts_[iface].since_last;
      const uint64_t after = bytes_ + buf_.size() + pcapng::packet_block_size(captured(f), dropcount != 0);
      if (packets_ + n > 0 && rotation_due(after, stamp(f), first_ns)) break;
      dropcount_used_[iface] = true;
      pcapng::append_packet(buf_, {iface, stamp(f), f.data, captured(f), original(f), flags(f), dropcount});
    }
    if (const int err = write_buffer(); err != 0) {
      return Status(Errc::IoError, Layer::Backend,
                    "pcapng-out: writing " + std::to_string(n) + " frame(s) of TX queue " + std::to_string(queue) +
                        " to '" + path_ + "' failed: " + std::strerror(err) + " (the file holds " +
                        std::to_string(packets_) + " frames); " + advice(err, path_));
    }
    if (packets_ == 0) first_ns_ = first_ns;
    packets_ += n;
    header_pending_ = false;
    for (size_t k = 0; k < n; ++k) {
      QueueCounts& c = counts_[interface_of(queue, frames[k])];
      c.offered += 1;
      c.written += 1;
      c.since_last = 0;
    }
    return n;
  }

  // Writes buf_ at the end of the file; returns 0 or the errno. A write cut
  // short is taken back, so that the file ends with a whole block.
  int write_buffer() {
    size_t done = 0;
    while (done < buf_.size()) {
      const ssize_t r = ::write(fd_, buf_.data() + done, buf_.size() - done);
      if (r > 0) {
        done += static_cast<size_t>(r);
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      const int err = r < 0 ? errno : EIO;
      if (done > 0 && (::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0 ||
                       ::lseek(fd_, static_cast<off_t>(bytes_), SEEK_SET) < 0)) {
        broken_ = "pcapng-out: '" + path_ + "' ends in a block cut at byte " + std::to_string(bytes_ + done) +
                  " that could not be taken back (" + std::strerror(errno) +
                  "); no more frames go to it: stop and restart the capture, or use rotate= to go on in the next "
                  "file";
      }
      return err;
    }
    bytes_ += buf_.size();
    return 0;
  }

  // Keeps the first error since the last flush for flush() to report.
  void defer(const Status& s, uint64_t frames) {
    if (deferred_.is_ok()) deferred_ = s;
    deferred_drops_ += frames;
  }

  const Options opt_;
  const uint64_t start_ns_;
  const uint16_t interfaces_;  // Interface Description Blocks in each file
  EthCaps caps_;
  std::vector<std::string> names_, descriptions_;
  size_t statistics_bytes_ = 0;  // the Interface Statistics Blocks a file ends with

  std::mutex mu_;  // TX queues send from their own engine threads
  std::vector<QueueCounts> counts_;       // per interface
  std::vector<bool> dropcount_used_;      // write_frames(): interfaces whose epb_dropcount this write carries
  int fd_ = -1;
  uint64_t index_ = 0;  // the open file's number in the capture (0: FILE)
  std::string path_;
  uint64_t bytes_ = 0;    // in the open file
  uint64_t packets_ = 0;  // in the open file
  uint64_t first_ns_ = 0; // the timestamp of the open file's first frame
  bool header_pending_ = true;
  std::string broken_;  // why the open file takes no more blocks; empty while it does
  std::vector<uint8_t> buf_;
  Status deferred_;
  uint64_t deferred_drops_ = 0;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_pcapng_out(std::string_view text) {
  auto spec = Spec::parse(text, ArgMode::Required, {"snaplen", "queues", "rxqs", "rotate", "files"});
  if (!spec) return spec.status();
  auto snaplen = spec->u64("snaplen", kMaxPcapFrame, 64, kMaxPcapFrame);
  if (!snaplen) return snaplen.status();
  auto queues = spec->u64("queues", 1, 1, kMaxQueues);
  if (!queues) return queues.status();
  auto rx_queues = spec->u64("rxqs", 0, 1, kMaxQueues);
  if (!rx_queues) return rx_queues.status();
  auto rotation = parse_rotation(*spec);
  if (!rotation) return rotation.status();
  Options o{spec->arg(), static_cast<uint32_t>(*snaplen), static_cast<uint16_t>(*queues),
            static_cast<uint16_t>(*rx_queues), *rotation};
  auto backend = std::make_unique<PcapngOutBackend>(std::move(o));
  if (Status s = backend->open_first(); !s) return s;
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace gnio::backend
