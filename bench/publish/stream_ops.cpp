// SPDX-License-Identifier: Apache-2.0
#include "publish/stream_ops.hpp"

#if GNIO_HAVE_CUDA
#include <cuda.h>

#include <mutex>
#include <string>

#include "gpu/cuda_util.hpp"

namespace publish_bench {

using gnio::Axis;
using gnio::Errc;
using gnio::Layer;
using gnio::Status;
using gnio::detail::cuda_status;

namespace {
using WriteValue64Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);

WriteValue64Fn g_write_value64 = nullptr;
Status g_lookup_status;
std::once_flag g_once;

void look_up() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  cudaError_t err = cudaGetDriverEntryPointByVersion("cuStreamWriteValue64", &fn, 12000, cudaEnableDefault, &q);
  if (err != cudaSuccess) {
    g_lookup_status = cuda_status(err, "looking up cuStreamWriteValue64");
  } else if (q != cudaDriverEntryPointSuccess || !fn) {
    g_lookup_status = Status(Errc::NotSupported, Layer::Cuda,
                             "the CUDA driver has no cuStreamWriteValue64 (query result " +
                                 std::to_string(static_cast<int>(q)) + "); use ring mem=host",
                             Axis::Cuda);
  } else {
    g_write_value64 = reinterpret_cast<WriteValue64Fn>(fn);
  }
}
}  // namespace

Status stream_write_value64(cudaStream_t stream, void* dst, uint64_t value) {
  std::call_once(g_once, look_up);
  if (!g_write_value64) return g_lookup_status;
  CUresult r = g_write_value64(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(dst), value, 0);
  if (r != CUDA_SUCCESS)
    return {Errc::Driver, Layer::Cuda,
            "cuStreamWriteValue64 failed with CUresult " + std::to_string(static_cast<int>(r)) +
                "; check `gnio caps` (stream memory operations) and `gnio doctor`"};
  return Status::ok();
}

}  // namespace publish_bench
#endif
