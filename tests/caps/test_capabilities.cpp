// SPDX-License-Identifier: Apache-2.0
// Both capability axes from constructed EthCaps / CudaDeviceInfo values.
#include <gtest/gtest.h>

#include "gnio/capabilities.hpp"

namespace {

using namespace gnio;

// An Ampere-class device that supports everything gnio asks for.
CudaDeviceInfo good_gpu() {
  CudaDeviceInfo d;
  d.ordinal = 0;
  d.bus_id = "0000:06:00.0";
  d.name = "Test GPU";
  d.cc_major = 8;
  d.cc_minor = 0;
  d.total_mem_bytes = 40ull << 30;
  d.multiprocessors = 108;
  d.can_map_host_memory = true;
  d.unified_addressing = true;
  d.gpudirect_rdma = true;
  d.gpudirect_rdma_writes_ordering = 100;
  d.stream_mem_ops = true;
  d.stream_mem_ops_64 = true;
  d.async_engines = 2;
  return d;
}

EthCaps full_nic() {
  EthCaps c;
  c.driver = "loop";
  c.max_rx_queues = 4;
  c.max_tx_queues = 4;
  return c;
}

NicAxis nic(EthCaps c) { return NicAxis::queried("loop:", std::move(c)); }
CudaAxis gpu(CudaDeviceInfo d) { return CudaAxis::from_device("0000:06:00.0", std::move(d), 13000, 13000); }

TEST(Capabilities, EverythingSupportedOnAGoodPair) {
  CapabilityReport r = evaluate_all(nic(full_nic()), gpu(good_gpu()));
  ASSERT_EQ(r.features.size(), all_features().size());
  for (const auto& v : r.features) {
    EXPECT_EQ(v.overall(), Verdict::Yes) << feature_name(v.feature) << ": " << v.nic.reason << " / " << v.cuda.reason;
    EXPECT_TRUE(refuse(v.feature, r).is_ok());
  }
}

TEST(Capabilities, Cc75RefusesPersistentKernelOnTheCudaAxis) {
  CudaDeviceInfo d = good_gpu();
  d.cc_major = 7;
  d.cc_minor = 5;
  CapabilityReport r = evaluate_all(nic(full_nic()), gpu(d));
  const FeatureVerdict& v = r.verdict(Feature::PersistentKernel);
  EXPECT_EQ(v.cuda.verdict, Verdict::No);
  EXPECT_EQ(v.nic.verdict, Verdict::NotApplicable);
  EXPECT_EQ(v.refused_by(), Axis::Cuda);
  EXPECT_NE(v.cuda.reason.find("compute capability 7.5 < 8.0"), std::string::npos) << v.cuda.reason;

  Status s = refuse(Feature::PersistentKernel, r);
  EXPECT_EQ(s.code(), Errc::NotSupported);
  EXPECT_EQ(s.axis(), Axis::Cuda);
  EXPECT_EQ(s.layer(), Layer::Caps);
  EXPECT_NE(s.message().find("persistent_kernel refused by the cuda axis"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("7.5 < 8.0"), std::string::npos);
  EXPECT_NE(s.to_string().find("gnio diagnose NOT_SUPPORTED"), std::string::npos);
  // The same device is refused for the GPU-visible queues too.
  EXPECT_EQ(r.verdict(Feature::GpuRx).refused_by(), Axis::Cuda);
}

TEST(Capabilities, Cc90IsEnough) {
  CudaDeviceInfo d = good_gpu();
  d.cc_major = 9;
  d.cc_minor = 0;
  EXPECT_TRUE(evaluate(Feature::PersistentKernel, nic(full_nic()), gpu(d)).supported());
}

TEST(Capabilities, NoWaitOnTimeRefusesOnTheNicAxis) {
  EthCaps c = full_nic();
  c.tx_wait_on_time = false;
  CapabilityReport r = evaluate_all(nic(c), gpu(good_gpu()));
  const FeatureVerdict& v = r.verdict(Feature::TxWaitOnTime);
  EXPECT_EQ(v.nic.verdict, Verdict::No);
  EXPECT_EQ(v.cuda.verdict, Verdict::Yes);
  EXPECT_EQ(v.refused_by(), Axis::Nic);
  EXPECT_NE(v.nic.reason.find("tx_wait_on_time=false"), std::string::npos) << v.nic.reason;
  EXPECT_NE(v.nic.reason.find("driver 'loop'"), std::string::npos);
  Status s = refuse(Feature::TxWaitOnTime, r);
  EXPECT_EQ(s.axis(), Axis::Nic);
  EXPECT_NE(s.message().find("tx_wait_on_time (txq:wait_on_time) refused by the nic axis"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("--nic loop:"), std::string::npos);
  // A regular TX queue is still fine.
  EXPECT_TRUE(r.verdict(Feature::GpuTx).supported());
}

TEST(Capabilities, NoTxPathRefusesTxFeaturesOnly) {
  EthCaps c = full_nic();
  c.tx_supported = false;
  CapabilityReport r = evaluate_all(nic(c), gpu(good_gpu()));
  EXPECT_EQ(r.verdict(Feature::GpuTx).nic.reason, "driver 'loop' has no TX path (tx_supported=false)");
  EXPECT_EQ(r.verdict(Feature::TxWaitOnTime).refused_by(), Axis::Nic);
  EXPECT_TRUE(r.verdict(Feature::GpuRx).supported());
}

TEST(Capabilities, NoCyclicRxRefusesRxFeatures) {
  EthCaps c = full_nic();
  c.rx_cyclic = false;
  CapabilityReport r = evaluate_all(nic(c), gpu(good_gpu()));
  for (Feature f : {Feature::GpuRx, Feature::RxRingMemGpu, Feature::RxRingMemHost}) {
    EXPECT_EQ(r.verdict(f).refused_by(), Axis::Nic) << feature_name(f);
    EXPECT_NE(r.verdict(f).nic.reason.find("rx_cyclic=false"), std::string::npos);
  }
}

// The receivers copy a device-memory ring's bursts from mapped pinned
// staging: no stream memory operation or copy engine is needed, mapped host
// memory is.
TEST(Capabilities, RingMemGpuNeedsMappedMemoryNotStreamMemOpsOrCopyEngines) {
  CudaDeviceInfo d = good_gpu();
  d.stream_mem_ops_64 = false;
  d.async_engines = 0;
  CapabilityReport r = evaluate_all(nic(full_nic()), gpu(d));
  EXPECT_TRUE(r.verdict(Feature::RxRingMemGpu).supported()) << r.verdict(Feature::RxRingMemGpu).cuda.reason;

  d = good_gpu();
  d.can_map_host_memory = false;
  r = evaluate_all(nic(full_nic()), gpu(d));
  const FeatureVerdict& v = r.verdict(Feature::RxRingMemGpu);
  EXPECT_EQ(v.refused_by(), Axis::Cuda);
  EXPECT_NE(v.cuda.reason.find("canMapHostMemory=0"), std::string::npos) << v.cuda.reason;
}

TEST(Capabilities, RingMemHostNeedsMappedMemoryAndUnifiedAddressing) {
  CudaDeviceInfo d = good_gpu();
  d.unified_addressing = false;
  CapabilityReport r = evaluate_all(nic(full_nic()), gpu(d));
  EXPECT_EQ(r.verdict(Feature::RxRingMemHost).refused_by(), Axis::Cuda);
  EXPECT_NE(r.verdict(Feature::RxRingMemHost).cuda.reason.find("unifiedAddressing=0"), std::string::npos);
  EXPECT_TRUE(r.verdict(Feature::RxRingMemGpu).supported());

  d = good_gpu();
  d.can_map_host_memory = false;
  r = evaluate_all(nic(full_nic()), gpu(d));
  EXPECT_NE(r.verdict(Feature::RxRingMemHost).cuda.reason.find("canMapHostMemory=0"), std::string::npos);
  EXPECT_EQ(r.verdict(Feature::GpuRx).refused_by(), Axis::Cuda);
}

TEST(Capabilities, GpuDirectRdmaNotesPeermemAsInformation) {
  FeatureVerdict v = evaluate(Feature::GpuDirectRdma, nic(full_nic()), gpu(good_gpu()));
  EXPECT_TRUE(v.supported());
  ASSERT_FALSE(v.notes.empty());
  EXPECT_NE(v.notes.front().find("nvidia_peermem"), std::string::npos);

  CudaDeviceInfo d = good_gpu();
  d.gpudirect_rdma = false;
  v = evaluate(Feature::GpuDirectRdma, nic(full_nic()), gpu(d));
  EXPECT_EQ(v.refused_by(), Axis::Cuda);
  EXPECT_NE(v.cuda.reason.find("cudaDevAttrGPUDirectRDMASupported=0"), std::string::npos);
}

TEST(Capabilities, EmulatedDeviceSupportsAllButGpuDirect) {
  CapabilityReport r = evaluate_all(nic(full_nic()), CudaAxis::emulated());
  for (const auto& v : r.features) {
    if (v.feature == Feature::GpuDirectRdma) {
      EXPECT_EQ(v.cuda.verdict, Verdict::No);
      EXPECT_NE(v.cuda.reason.find("emulated"), std::string::npos);
    } else {
      EXPECT_EQ(v.overall(), Verdict::Yes) << feature_name(v.feature);
    }
  }
}

TEST(Capabilities, UnqueriedAxesAreUnknownAndNamed) {
  CapabilityReport r = evaluate_all(NicAxis::not_queried(), CudaAxis::emulated());
  const FeatureVerdict& v = r.verdict(Feature::GpuRx);
  EXPECT_EQ(v.overall(), Verdict::Unknown);
  EXPECT_EQ(v.refused_by(), Axis::Nic);
  Status s = refuse(Feature::GpuRx, r);
  EXPECT_EQ(s.code(), Errc::NotSupported);
  EXPECT_NE(s.message().find("could not be established on the nic axis"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--nic SPEC"), std::string::npos);
  // The persistent kernel does not depend on the NIC.
  EXPECT_TRUE(r.verdict(Feature::PersistentKernel).supported());

  CudaAxis none = CudaAxis::unavailable("auto", "no driver");
  FeatureVerdict p = evaluate(Feature::PersistentKernel, nic(full_nic()), none);
  EXPECT_EQ(p.overall(), Verdict::Unknown);
  EXPECT_EQ(p.refused_by(), Axis::Cuda);
  EXPECT_NE(p.cuda.reason.find("no driver"), std::string::npos);
}

TEST(Capabilities, NoWinsOverUnknown) {
  EthCaps c = full_nic();
  c.tx_wait_on_time = false;
  FeatureVerdict v = evaluate(Feature::TxWaitOnTime, nic(c), CudaAxis::unavailable("auto", "no driver"));
  EXPECT_EQ(v.overall(), Verdict::No);
  EXPECT_EQ(v.refused_by(), Axis::Nic);
}

TEST(Capabilities, FeatureNamesRoundTrip) {
  for (Feature f : all_features()) {
    auto back = feature_from_name(feature_name(f));
    ASSERT_TRUE(back.has_value()) << feature_name(f);
    EXPECT_EQ(*back, f);
  }
  EXPECT_EQ(feature_name(Feature::TxWaitOnTime), "tx_wait_on_time");
  EXPECT_EQ(feature_queue(Feature::GpuRx), "rxq:cyclic");
  EXPECT_FALSE(feature_from_name("warp_drive").has_value());
}

TEST(Capabilities, SelectCudaAxis) {
  CudaDeviceInfo a = good_gpu();
  CudaDeviceInfo b = good_gpu();
  b.ordinal = 1;
  b.bus_id = "0000:81:00.0";
  CudaRuntimeInfo rt;
  rt.runtime_version = 13000;
  rt.driver_version = 13000;

  EXPECT_EQ(select_cuda_axis("cpu", {}, rt, "").state, CudaAxis::State::Emulated);
  CudaAxis first = select_cuda_axis("auto", {a, b}, rt, "");
  ASSERT_EQ(first.state, CudaAxis::State::Device);
  EXPECT_EQ(first.device.ordinal, 0);
  EXPECT_EQ(first.driver_version, 13000);
  // nvidia-smi's 8-digit domain and upper case resolve to the same device.
  CudaAxis second = select_cuda_axis("00000000:81:00.0", {a, b}, rt, "");
  ASSERT_EQ(second.state, CudaAxis::State::Device);
  EXPECT_EQ(second.device.ordinal, 1);

  CudaAxis missing = select_cuda_axis("0000:02:00.0", {a, b}, rt, "");
  EXPECT_EQ(missing.state, CudaAxis::State::Unavailable);
  EXPECT_NE(missing.error.find("0000:02:00.0 not found"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("0000:06:00.0, 0000:81:00.0"), std::string::npos) << missing.error;

  rt.error = "cudaGetDeviceCount failed: cudaErrorInsufficientDriver";
  CudaAxis none = select_cuda_axis("auto", {}, rt, "");
  EXPECT_EQ(none.state, CudaAxis::State::Unavailable);
  EXPECT_NE(none.error.find("cudaErrorInsufficientDriver"), std::string::npos);

  CudaAxis bad = select_cuda_axis("gpu0", {a}, rt, "");
  EXPECT_NE(bad.error.find("'gpu0' is not a PCIe bus id"), std::string::npos);
}

TEST(Capabilities, ReportTableNamesAxesAndReasons) {
  CudaDeviceInfo d = good_gpu();
  d.cc_major = 7;
  d.cc_minor = 5;
  std::string t = format_report(evaluate_all(nic(full_nic()), gpu(d)));
  EXPECT_NE(t.find("NIC axis (loop:)"), std::string::npos) << t;
  EXPECT_NE(t.find("CUDA axis (gpu 0000:06:00.0)"), std::string::npos) << t;
  EXPECT_NE(t.find("compute capability  7.5"), std::string::npos) << t;
  EXPECT_NE(t.find("persistent_kernel [cuda axis, no]"), std::string::npos) << t;
}

// The wrapper opens a real queue spec; the emulated device needs no GPU.
TEST(Capabilities, QueryFeatureOpensTheSpec) {
  FeatureVerdict rx = query_feature(Feature::GpuRx, "synthetic:count=1", "cpu");
  EXPECT_EQ(rx.nic.verdict, Verdict::Yes) << rx.nic.reason;
  EXPECT_EQ(rx.cuda.verdict, Verdict::Yes);
  FeatureVerdict bad = query_feature(Feature::GpuRx, "nonsense:", "cpu");
  EXPECT_EQ(bad.nic.verdict, Verdict::Unknown);
  EXPECT_NE(bad.nic.reason.find("'nonsense:' could not be opened"), std::string::npos) << bad.nic.reason;
  CapabilityReport r = discover("synthetic:count=1", "cpu");
  EXPECT_EQ(r.nic.state, NicAxis::State::Queried);
  EXPECT_EQ(r.nic.caps.driver, "synthetic");
  EXPECT_EQ(r.cuda.state, CudaAxis::State::Emulated);
}

}  // namespace
