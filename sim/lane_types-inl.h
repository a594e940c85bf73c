// The lane types of sim/'s Highway kernels, named once: fp32 lanes DF (vectors VF) and, lane for
// lane, int32 DI (VI), uint32 DU32 and uint8 DU8. A kernel's namespace takes them with
// `using namespace fp8lab::sim::HWY_NAMESPACE::lane_types;`. A Highway per-target header: include
// it after <hwy/highway.h> in a foreach_target file.
#if defined(FP8LAB_SIM_LANE_TYPES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FP8LAB_SIM_LANE_TYPES_INL_H_
#undef FP8LAB_SIM_LANE_TYPES_INL_H_
#else
#define FP8LAB_SIM_LANE_TYPES_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::HWY_NAMESPACE::lane_types {

using DF = hwy::HWY_NAMESPACE::ScalableTag<float>;
using DI = hwy::HWY_NAMESPACE::RebindToSigned<DF>;
using DU32 = hwy::HWY_NAMESPACE::RebindToUnsigned<DF>;
using DU8 = hwy::HWY_NAMESPACE::Rebind<std::uint8_t, DF>;
using VF = hwy::HWY_NAMESPACE::Vec<DF>;
using VI = hwy::HWY_NAMESPACE::Vec<DI>;

}  // namespace fp8lab::sim::HWY_NAMESPACE::lane_types
HWY_AFTER_NAMESPACE();

#endif  // FP8LAB_SIM_LANE_TYPES_INL_H_
