// SPDX-License-Identifier: Apache-2.0
// The files a run writes (--json, --flows-out) and its standard output:
// every write checked, the first error kept with the file's name and the C
// library's reason, so that a full disk, a closed pipe or a bad path is
// reported after the summary and the other outputs are written all the same.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "gnio/status.hpp"
#include "packet_processing/flow_table.hpp"

namespace gnio::app {

/// @brief One output file, written through stdio; errors are values.
class OutputFile {
 public:
  /// @brief Opens `path` (given with `option`, e.g. "--json") for writing;
  /// IoError naming both, the reason and what to do when it cannot be opened.
  static Result<OutputFile> open(std::string option, std::string path);

  OutputFile() = default;
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  /// @brief Whether a file is open (open() succeeded, close() not called).
  bool is_open() const { return file_ != nullptr; }
  /// @brief Appends text; after a failed write the file takes no more and
  /// close() reports the failure.
  void write(std::string_view text);
  /// @brief Flushes and closes: the first error of a write or of the close
  /// itself (IoError naming the file), else ok. Ok when nothing is open.
  Status close();

 private:
  OutputFile(std::string option, std::string path, std::FILE* file);

  std::string option_, path_;
  std::FILE* file_ = nullptr;
  int error_ = 0;  // errno of the first failed write
};

/// @brief --flows-out: the flow table as CSV (a path ending in .csv) or JSON
/// lines, one snapshot after another.
class FlowExport {
 public:
  /// @brief Opens `path` and writes the CSV header where there is one.
  static Result<FlowExport> open(const std::string& path);

  FlowExport() = default;
  /// @brief Appends the flows as snapshot number N (0, 1, ...) taken at_s
  /// seconds into the run; nothing when no file is open.
  void snapshot(const std::vector<dev::app::FlowEntry>& flows, double at_s);
  /// @brief OutputFile::close() of the export.
  Status close() { return file_.close(); }

 private:
  OutputFile file_;
  bool csv_ = false;
  uint64_t snapshots_ = 0;
};

/// @brief Flushes standard output (the --print lines and the summary): an
/// IoError naming it, the reason and what to do when this flush or an earlier
/// write to it failed, else ok.
Status flush_standard_output();

/// @brief Writes `text` as the whole of `path` (open, write, close), the
/// first error as OutputFile reports it.
Status write_output(std::string option, std::string path, std::string_view text);

}  // namespace gnio::app
