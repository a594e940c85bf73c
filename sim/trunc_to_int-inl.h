// TruncToInt: fp32 lanes to int32, truncated toward zero, for callers that have proved every lane
// below 2^31 in magnitude (the block-scaled GEMM and RHT lanes). hn::ConvertTo adds a fix-up for
// out-of-range lanes (x86's conversion gives 0x80000000 there) that such callers pay for nothing.
// A Highway per-target header: include it after <hwy/highway.h> in a foreach_target file.
#if defined(FP8LAB_SIM_TRUNC_TO_INT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FP8LAB_SIM_TRUNC_TO_INT_INL_H_
#undef FP8LAB_SIM_TRUNC_TO_INT_INL_H_
#else
#define FP8LAB_SIM_TRUNC_TO_INT_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace fp8lab::sim::HWY_NAMESPACE {

template <class V>
HWY_INLINE hwy::HWY_NAMESPACE::Vec<hwy::HWY_NAMESPACE::RebindToSigned<hwy::HWY_NAMESPACE::DFromV<V>>>
TruncToInt(V v) {
  namespace hn = hwy::HWY_NAMESPACE;
  using VI [[maybe_unused]] = hn::Vec<hn::RebindToSigned<hn::DFromV<V>>>;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (sizeof(v.raw) == 64) return VI{_mm512_cvttps_epi32(v.raw)};
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (sizeof(v.raw) == 32) return VI{_mm256_cvttps_epi32(v.raw)};
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  if constexpr (sizeof(v.raw) == 16) return VI{_mm_cvttps_epi32(v.raw)};
#endif
  return hn::ConvertTo(hn::RebindToSigned<hn::DFromV<V>>(), v);
}

}  // namespace fp8lab::sim::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // FP8LAB_SIM_TRUNC_TO_INT_INL_H_
