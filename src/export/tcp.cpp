// SPDX-License-Identifier: Apache-2.0
// IPFIX over TCP (RFC 7011 §10.4): a non-blocking connection with a bounded
// queue of whole messages behind it. A collector that reads slowly fills
// the queue (back-pressure counted) and then loses messages (QueueFull); a
// connection that goes away loses what it held (CollectorDown) and is made
// again after a wait, the templates first.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "export/transport.hpp"

namespace gnio::ipfix {

namespace {

struct Queued {
  std::vector<uint8_t> bytes;
  size_t written = 0;
  uint64_t records = 0;
};

class TcpTransport final : public Transport {
 public:
  TcpTransport(SocketAddress addr, const ExporterOptions& o, std::function<std::vector<uint8_t>()> greeting)
      : addr_(addr), options_(o), greeting_(std::move(greeting)) {}
  ~TcpTransport() override { close_socket(); }

  bool send(std::span<const uint8_t> message, uint64_t records, ExporterStats& stats) override {
    if (state_ == State::Down) {
      lose(LossReason::CollectorDown, records, stats);
      return false;
    }
    if (queued_bytes_ + message.size() > options_.tcp_queue_bytes) {
      lose(LossReason::QueueFull, records, stats);
      return false;
    }
    queue_.push_back({std::vector<uint8_t>(message.begin(), message.end()), 0, records});
    queued_bytes_ += message.size();
    if (state_ == State::Connected) write_queue(stats);
    return true;
  }

  void poll(ExporterStats& stats) override {
    if (state_ == State::Down && std::chrono::steady_clock::now() >= next_attempt_) connect(stats);
    if (state_ == State::Connecting) finish_connect(stats);
    if (state_ == State::Connected) {
      if (peer_closed()) {
        drop_connection(stats);
        return;
      }
      write_queue(stats);
    }
  }

  bool up() const override { return state_ == State::Connected; }
  size_t max_message() const override { return options_.max_message_tcp; }
  bool pending() const override { return state_ != State::Down && !queue_.empty(); }
  void drop_pending(ExporterStats& stats) override {
    for (const Queued& q : queue_) lose(LossReason::QueueFull, q.records, stats);
    queue_.clear();
    queued_bytes_ = 0;
    // A message written in part cannot be followed by another on this connection.
    close_socket();
    state_ = State::Down;
  }

  // At open: a connection attempt that may wait a moment, so that the
  // first records of a run find the collector it names.
  void first_connect(ExporterStats& stats) {
    connect(stats);
    if (state_ != State::Connecting) return;
    pollfd p{fd_, POLLOUT, 0};
    ::poll(&p, 1, 1000);
    finish_connect(stats);
  }

 private:
  enum class State { Down, Connecting, Connected };

  void lose(LossReason r, uint64_t records, ExporterStats& stats) { stats.lost[static_cast<size_t>(r)] += records; }

  void connect(ExporterStats& stats) {
    fd_ = ::socket(addr_.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return retry_later(stats);
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (options_.send_buffer > 0) setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &options_.send_buffer, sizeof(int));
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr_.storage), addr_.length) == 0) return connected(stats);
    if (errno == EINPROGRESS) {
      state_ = State::Connecting;
      return;
    }
    retry_later(stats);
  }

  void finish_connect(ExporterStats& stats) {
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, 0) <= 0) return;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) return retry_later(stats);
    connected(stats);
  }

  void connected(ExporterStats& stats) {
    state_ = State::Connected;
    stats.connects += 1;
    stats.template_sends += 1;
    std::vector<uint8_t> hello = greeting_();
    queued_bytes_ += hello.size();
    queue_.push_front({std::move(hello), 0, 0});
    write_queue(stats);
  }

  // The queue's records are lost with the connection: messages already
  // written in part cannot be finished on another one.
  void retry_later(ExporterStats& stats) {
    close_socket();
    for (const Queued& q : queue_) lose(LossReason::CollectorDown, q.records, stats);
    queue_.clear();
    queued_bytes_ = 0;
    state_ = State::Down;
    next_attempt_ = std::chrono::steady_clock::now() + options_.reconnect;
  }

  void drop_connection(ExporterStats& stats) { retry_later(stats); }

  // A collector that went away closed its end: writing to it would be
  // accepted once and lost (its RST comes after), so look before writing.
  bool peer_closed() {
    uint8_t b;
    const ssize_t n = ::recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

  void write_queue(ExporterStats& stats) {
    while (!queue_.empty()) {
      Queued& q = queue_.front();
      const ssize_t n = ::send(fd_, q.bytes.data() + q.written, q.bytes.size() - q.written, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          stats.backpressure += 1;
          return;
        }
        return drop_connection(stats);
      }
      q.written += static_cast<size_t>(n);
      if (q.written < q.bytes.size()) {
        stats.backpressure += 1;
        return;
      }
      stats.messages_sent += 1;
      stats.bytes_sent += q.bytes.size();
      stats.records_sent += q.records;
      queued_bytes_ -= q.bytes.size();
      queue_.pop_front();
    }
  }

  void close_socket() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  SocketAddress addr_;
  ExporterOptions options_;
  std::function<std::vector<uint8_t>()> greeting_;
  int fd_ = -1;
  State state_ = State::Down;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::deque<Queued> queue_;
  size_t queued_bytes_ = 0;
};

}  // namespace

Result<std::unique_ptr<Transport>> open_tcp(const Collector& c, const ExporterOptions& o,
                                            std::function<std::vector<uint8_t>()> greeting, ExporterStats& stats) {
  auto addr = resolve(c);
  if (!addr) return addr.status();
  auto t = std::make_unique<TcpTransport>(*addr, o, std::move(greeting));
  t->first_connect(stats);
  return std::unique_ptr<Transport>(std::move(t));
}

}  // namespace gnio::ipfix
