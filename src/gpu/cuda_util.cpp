// SPDX-License-Identifier: Apache-2.0
#include "gpu/cuda_util.hpp"

#if GNIO_HAVE_CUDA
namespace gnio::detail {

Status cuda_status(cudaError_t err, const std::string& what) {
  std::string msg = what + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  switch (err) {
    case cudaErrorMemoryAllocation:
      return {Errc::NoMemory, Layer::Cuda, msg + "; free GPU/pinned memory or request smaller rings"};
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevicePointer:
      return {Errc::InvalidValue, Layer::Cuda, msg + "; check the sizes and pointers passed"};
    case cudaErrorNotSupported:
      return {Errc::NotSupported, Layer::Cuda, msg + "; the device lacks this feature (run `gnio caps`)",
              Axis::Cuda};
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
      return {Errc::NotFound, Layer::Cuda, msg + "; check `nvidia-smi -L` and the bus id"};
    default:
      return {Errc::Driver, Layer::Cuda,
              msg + "; the CUDA driver layer failed: run `gnio doctor` (toolkit vs driver versions)"};
  }
}

}  // namespace gnio::detail
#endif
