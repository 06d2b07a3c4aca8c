// SPDX-License-Identifier: Apache-2.0
// A fresh folder per test, named after the process and the test, removed
// after it: for tests that write files (captures, reports).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>

namespace gnio::test {

class TestDir : public ::testing::Test {
 protected:
  // prefix: the folder name's start, e.g. "gnio-pcapng-".
  explicit TestDir(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir() const { return dir_.string(); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace gnio::test
