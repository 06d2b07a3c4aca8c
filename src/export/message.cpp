// SPDX-License-Identifier: Apache-2.0
// One IPFIX message in a byte buffer (RFC 7011 §3): the header, sets and
// their fields in network byte order, lengths written when a set closes.
#include <algorithm>

#include "gnio/ipfix.hpp"

namespace gnio::ipfix {

namespace {

void put16(std::vector<uint8_t>& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v >> 16));
  put16(b, static_cast<uint16_t>(v));
}
void put64(std::vector<uint8_t>& b, uint64_t v) {
  put32(b, static_cast<uint32_t>(v >> 32));
  put32(b, static_cast<uint32_t>(v));
}
void patch16(std::vector<uint8_t>& b, size_t at, size_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}
void put_varlen(std::vector<uint8_t>& b, std::string_view text) {
  const size_t n = std::min<size_t>(text.size(), 65535);
  if (n < 255) {
    b.push_back(static_cast<uint8_t>(n));
  } else {
    b.push_back(255);
    put16(b, static_cast<uint16_t>(n));
  }
  b.insert(b.end(), text.begin(), text.begin() + static_cast<std::ptrdiff_t>(n));
}

}  // namespace

void MessageWriter::begin(uint32_t export_time_s, uint32_t sequence, uint32_t domain) {
  buf_.clear();
  set_id_ = 0;
  put16(buf_, 10);
  put16(buf_, 0);  // length, at finish()
  put32(buf_, export_time_s);
  put32(buf_, sequence);
  put32(buf_, domain);
}

void MessageWriter::close_set() {
  if (set_id_ == 0) return;
  patch16(buf_, set_start_ + 2, buf_.size() - set_start_);
  set_id_ = 0;
}

void MessageWriter::begin_set(uint16_t set_id) {
  close_set();
  set_start_ = buf_.size();
  set_id_ = set_id;
  put16(buf_, set_id);
  put16(buf_, 0);
}

void MessageWriter::u8(uint8_t v) { buf_.push_back(v); }
void MessageWriter::u16(uint16_t v) { put16(buf_, v); }
void MessageWriter::u32(uint32_t v) { put32(buf_, v); }
void MessageWriter::u64(uint64_t v) { put64(buf_, v); }
void MessageWriter::bytes(std::span<const uint8_t> b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
void MessageWriter::varlen(std::string_view text) { put_varlen(buf_, text); }

std::span<const uint8_t> MessageWriter::finish() {
  close_set();
  patch16(buf_, 2, buf_.size());
  return buf_;
}

void MessageWriter::set_sequence(uint32_t sequence) {
  for (int i = 0; i < 4; ++i) buf_[8 + i] = static_cast<uint8_t>(sequence >> (24 - 8 * i));
}

void RecordWriter::u16(uint16_t v) { put16(buf_, v); }
void RecordWriter::u32(uint32_t v) { put32(buf_, v); }
void RecordWriter::u64(uint64_t v) { put64(buf_, v); }
void RecordWriter::varlen(std::string_view text) { put_varlen(buf_, text); }

}  // namespace gnio::ipfix
