// SPDX-License-Identifier: Apache-2.0
// The compatibility tables of data/compat and the version helpers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gnio/doctor.hpp"

namespace {

using namespace gnio::doctor;

TEST(Versions, Compare) {
  EXPECT_EQ(compare_versions("580.65.06", "580"), 1);
  EXPECT_EQ(compare_versions("580", "580.0.0"), 0);
  EXPECT_EQ(compare_versions("570.124.06", "575.51.03"), -1);
  EXPECT_EQ(compare_versions("12.10", "12.9"), 1);
  EXPECT_EQ(compare_versions("5.4.0-150-generic", "5.12"), -1);
}

TEST(Versions, ParseNvcc) {
  EXPECT_EQ(parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\n"
                               "Cuda compilation tools, release 13.0, V13.0.88\n"
                               "Build cuda_13.0.r13.0/compiler.36424714_0\n"),
            "13.0.88");
  EXPECT_EQ(parse_nvcc_version("Cuda compilation tools, release 12.4"), "12.4");
  EXPECT_EQ(parse_nvcc_version("command not found"), "");
}

TEST(Versions, ParseDriver) {
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"),
            "535.104.05");
  EXPECT_EQ(parse_nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  "
                                        "Release Build  (dvs-builder@U16-I3-B03-4-3)  Sun Jul 27 06:54:38 UTC 2025\n"),
            "580.65.06");
  EXPECT_EQ(parse_nvidia_driver_version("NVRM version: NVIDIA UNIX aarch64 Kernel Module  570.26  Fri Jan 1\n"),
            "570.26");
  EXPECT_EQ(parse_nvidia_driver_version(""), "");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(0), "");
}

TEST(Tables, BuiltInCudaDriverTable) {
  auto t = CompatTables::load();
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_EQ(t->min_driver_for("13.0"), "580.65.06");
  EXPECT_EQ(t->min_driver_for("12.4.1"), "550.54.14");
  EXPECT_EQ(t->min_driver_for("12.0"), "525.60.13");
  EXPECT_FALSE(t->min_driver_for("12.7").has_value());  // there was no CUDA 12.7
  EXPECT_EQ(t->min_driver_minor_compat(12), "525.60.13");
  EXPECT_EQ(t->min_driver_minor_compat(13), "580");
  EXPECT_EQ(t->min_driver_minor_compat(11), "450.80.02");
  EXPECT_EQ(t->newest_toolkit_for("570.124.06"), "12.8");
  EXPECT_EQ(t->newest_toolkit_for("580.95.05"), "13.0");
  EXPECT_EQ(t->newest_toolkit_for("440.33"), "");
  // Each table row's minimum grows with the toolkit version.
  const auto& rows = t->toolkit_driver();
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GT(compare_versions(rows[i].toolkit, rows[i - 1].toolkit), 0) << rows[i].toolkit;
    EXPECT_GT(compare_versions(rows[i].min_driver, rows[i - 1].min_driver), 0) << rows[i].toolkit;
  }
  EXPECT_NE(t->cuda_driver_source().find("https://docs.nvidia.com/cuda/cuda-toolkit-release-notes"), std::string::npos);
}

TEST(Tables, BuiltInDocaCudaTable) {
  auto t = CompatTables::load();
  ASSERT_TRUE(t.has_value());
  const DocaCudaRow* r = t->doca_row("2.9.0");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->cuda_min, "12.0");
  EXPECT_EQ(r->cuda_below, "13.0");
  r = t->doca_row("3.2.1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->cuda_below, "14.0");
  EXPECT_EQ(t->doca_row("3.1.0"), nullptr);
  EXPECT_EQ(t->doca_row("1.5.0"), nullptr);
  EXPECT_NE(t->doca_cuda_source().find("https://docs.nvidia.com/doca/sdk/doca-compatibility-policy/index.html"),
            std::string::npos);
}

TEST(Tables, DataDirectoryMatchesTheBuiltInCopy) {
  auto built_in = CompatTables::load();
  auto from_dir = CompatTables::load(GNIO_COMPAT_DIR);
  ASSERT_TRUE(from_dir.has_value()) << from_dir.status().to_string();
  ASSERT_EQ(from_dir->toolkit_driver().size(), built_in->toolkit_driver().size());
  ASSERT_EQ(from_dir->doca_cuda().size(), built_in->doca_cuda().size());
  EXPECT_EQ(from_dir->min_driver_for("12.9"), built_in->min_driver_for("12.9"));
}

TEST(Tables, BadDirectoriesAreReported) {
  auto missing = CompatTables::load("/nonexistent-gnio-compat");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("/nonexistent-gnio-compat/cuda_driver.json cannot be read"),
            std::string::npos)
      << missing.status().message();

  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / "gnio_bad_compat";
  fs::create_directories(dir);
  std::ofstream(dir / "cuda_driver.json") << R"({"minor_version_compatibility": [], "toolkit_driver": [{"toolkit": 13}]})";
  std::ofstream(dir / "doca_cuda.json") << R"({"rows": []})";
  auto bad = CompatTables::load(dir.string());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("cuda_driver.json is malformed"), std::string::npos) << bad.status().message();
  fs::remove_all(dir);
}

}  // namespace
