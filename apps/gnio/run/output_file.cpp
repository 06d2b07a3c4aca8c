// SPDX-License-Identifier: Apache-2.0
#include "output_file.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include "packet_processing/report.hpp"

namespace gnio::app {

namespace {

const char* what_to_do(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT: return "free space on its file system, or give a path on another one";
    case EPIPE: return "the program reading the pipe went away: keep it reading until gnio exits";
    case ENAMETOOLONG: return "give a shorter path";
    case ENOENT:
    case ENOTDIR: return "create the folder first, or give a path in an existing one";
    case EACCES:
    case EPERM:
    case EROFS: return "check the folder's permissions, or give a writable path";
    case EISDIR: return "give a file name, not a folder";
    default: return "check the path and the device it is on";
  }
}

Status io_error(const std::string& option, const std::string& path, const char* doing, int err) {
  return Status(Errc::IoError, Layer::App,
                "cannot " + std::string(doing) + " " + option + " " + path + ": " + std::strerror(err) + " (errno " +
                    std::to_string(err) + "); " + what_to_do(err));
}

}  // namespace

Result<OutputFile> OutputFile::open(std::string option, std::string path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return io_error(option, path, "open", errno);
  return OutputFile(std::move(option), std::move(path), f);
}

OutputFile::OutputFile(std::string option, std::string path, std::FILE* file)
    : option_(std::move(option)), path_(std::move(path)), file_(file) {}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : option_(std::move(other.option_)),
      path_(std::move(other.path_)),
      file_(std::exchange(other.file_, nullptr)),
      error_(other.error_) {}

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  if (this != &other) {
    if (file_ != nullptr) std::fclose(file_);
    option_ = std::move(other.option_);
    path_ = std::move(other.path_);
    file_ = std::exchange(other.file_, nullptr);
    error_ = other.error_;
  }
  return *this;
}

OutputFile::~OutputFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void OutputFile::write(std::string_view text) {
  if (file_ == nullptr || error_ != 0 || text.empty()) return;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) error_ = errno != 0 ? errno : EIO;
}

Status OutputFile::close() {
  if (file_ == nullptr) return Status::ok();
  int err = error_;
  errno = 0;
  // A buffered write fails only here when the buffer is flushed (/dev/full
  // takes the open and every fwrite of a small file).
  if (std::fflush(file_) != 0 && err == 0) err = errno != 0 ? errno : EIO;
  if (std::fclose(std::exchange(file_, nullptr)) != 0 && err == 0) err = errno != 0 ? errno : EIO;
  if (err != 0) return io_error(option_, path_, "write", err);
  return Status::ok();
}

Result<FlowExport> FlowExport::open(const std::string& path) {
  auto file = OutputFile::open("--flows-out", path);
  if (!file) return file.status();
  FlowExport e;
  e.file_ = std::move(*file);
  e.csv_ = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  if (e.csv_) e.file_.write(csv_header());
  return e;
}

void FlowExport::snapshot(const std::vector<dev::app::FlowEntry>& flows, double at_s) {
  if (!file_.is_open()) return;
  for (const dev::app::FlowEntry& f : flows) {
    if (csv_) {
      file_.write(flow_csv(f, snapshots_, at_s));
    } else {
      nlohmann::json j = flow_json(f);
      j["snapshot"] = snapshots_;
      j["at_s"] = at_s;
      file_.write(json_text(j) + "\n");
    }
  }
  ++snapshots_;
}

Status flush_standard_output() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout)) return Status::ok();
  // An earlier write's errno is gone by now; EIO says only that one failed.
  const int err = !flushed && errno != 0 ? errno : EIO;
  return Status(Errc::IoError, Layer::App,
                std::string("cannot write standard output (the --print lines and the summary): ") + std::strerror(err) +
                    " (errno " + std::to_string(err) + "); " + what_to_do(err));
}

Status write_output(std::string option, std::string path, std::string_view text) {
  auto file = OutputFile::open(std::move(option), std::move(path));
  if (!file) return file.status();
  file->write(text);
  return file->close();
}

}  // namespace gnio::app
