// SPDX-License-Identifier: Apache-2.0
// The event stream's sink: a file opened for appending, or a non-blocking
// Unix stream socket. A line is written whole or counted as lost; on a
// socket, a line written in part is finished before the next one, so that
// the shipper never sees half a line followed by another.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "gnio/events.hpp"

namespace gnio::events {

Result<Sink> Sink::open(std::string target) {
  Sink s;
  s.target_ = std::move(target);
  s.socket_ = s.target_.rfind("unix:", 0) == 0;
  if (Status st = s.open_target(); !st) return st;
  return s;
}

Sink::Sink(Sink&& o) noexcept
    : target_(std::move(o.target_)), socket_(o.socket_), fd_(std::exchange(o.fd_, -1)),
      pending_(std::move(o.pending_)), stats_(o.stats_) {}

Sink& Sink::operator=(Sink&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    target_ = std::move(o.target_);
    socket_ = o.socket_;
    fd_ = std::exchange(o.fd_, -1);
    pending_ = std::move(o.pending_);
    stats_ = o.stats_;
  }
  return *this;
}

Sink::~Sink() {
  if (fd_ >= 0) ::close(fd_);
}

Status Sink::open_target() {
  if (!socket_) {
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0)
      return Status(Errc::IoError, Layer::App,
                    "cannot open the event file " + target_ + ": " + std::strerror(errno) +
                        "; check that its folder exists and is writable");
    return {};
  }
  const std::string path = target_.substr(5);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return Status(Errc::InvalidValue, Layer::App,
                  "the event socket " + target_ + " has a path that is empty or longer than " +
                      std::to_string(sizeof addr.sun_path - 1) + " bytes; give a shorter unix:PATH");
  std::memcpy(addr.sun_path, path.data(), path.size());
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    return {};
  }
  const int e = errno;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  return Status(Errc::IoError, Layer::App,
                "cannot connect to the event socket " + path + ": " + std::strerror(e) +
                    "; start the shipper that listens there first");
}

void Sink::write_line(std::string_view line) {
  if (fd_ < 0) {
    stats_.lost += 1;
    return;
  }
  if (!socket_) {
    std::string l(line);
    l.push_back('\n');
    // O_APPEND: one write() per line, so lines from a rotation's old and
    // new file never interleave.
    if (::write(fd_, l.data(), l.size()) == static_cast<ssize_t>(l.size())) {
      stats_.lines += 1;
    } else {
      stats_.lost += 1;
    }
    return;
  }
  while (!pending_.empty()) {
    const ssize_t n = ::send(fd_, pending_.data(), pending_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n <= 0) {
      stats_.lost += 1;
      return;
    }
    pending_.erase(0, static_cast<size_t>(n));
  }
  std::string l(line);
  l.push_back('\n');
  const ssize_t n = ::send(fd_, l.data(), l.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n <= 0) {
    stats_.lost += 1;
    return;
  }
  stats_.lines += 1;
  if (static_cast<size_t>(n) < l.size()) pending_ = l.substr(static_cast<size_t>(n));
}

Status Sink::reopen() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pending_.clear();
  Status s = open_target();
  if (s) stats_.reopens += 1;
  return s;
}

}  // namespace gnio::events
