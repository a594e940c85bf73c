// gpu/cast.cuh compiled for the host (gpu/cast_api.hpp: host_twin). On the host the satfinite
// conversion is cuda_fp8.h's software path; everything else is the code the kernels run.
#include "gpu/cast.cuh"
#include "gpu/cast_api.hpp"
#include "gpu/quantize_common.cuh"

namespace fp8lab::gpu::host_twin {
namespace {

struct CastRn {
  float y;
  std::uint8_t* code;
  template <Format F, Overflow M>
  void operator()() const {
    *code = gpu::cast_rn<F, M>(y);
  }
};
struct CastStochastic {
  float y;
  std::uint32_t random;
  std::uint8_t* code;
  template <Format F, Overflow M>
  void operator()() const {
    *code = gpu::cast_stochastic<F, M>(y, random);
  }
};

}  // namespace

std::uint8_t cast_rn(float y, sim::Format format, sim::Overflow mode) {
  std::uint8_t code = 0;
  detail::dispatch_format_mode(format, mode, "host_twin::cast_rn", CastRn{y, &code});
  return code;
}

std::uint8_t cast_stochastic(float y, sim::Format format, sim::Overflow mode,
                             std::uint32_t random) {
  std::uint8_t code = 0;
  detail::dispatch_format_mode(format, mode, "host_twin::cast_stochastic",
                               CastStochastic{y, random, &code});
  return code;
}

float decode(std::uint8_t code, sim::Format format) {
  detail::check_fp8(format, "host_twin::decode");
  return format == Format::E4M3 ? gpu::decode<Format::E4M3>(code) : gpu::decode<Format::E5M2>(code);
}

}  // namespace fp8lab::gpu::host_twin
