// The frame every Highway tile file of sim/gemm stands in (fp32_seq.cpp, hopper.cpp,
// hopper_rz.cpp), written once. Such a file defines HWY_TARGET_INCLUDE to its own path and includes
// <hwy/foreach_target.h>, which compiles it once per SIMD target; its kernels stand between
//   FP8LAB_GEMM_TILES_BEGIN;   (gemm_detail::HWY_NAMESPACE opened, hn its alias)
//   FP8LAB_GEMM_TILES_END;
// and its dispatching wrappers after them, under #if HWY_ONCE.
#pragma once

#include <hwy/highway.h>

#define FP8LAB_GEMM_TILES_BEGIN        \
  HWY_BEFORE_NAMESPACE();              \
  namespace fp8lab::sim::gemm_detail { \
  namespace HWY_NAMESPACE {            \
  namespace hn = hwy::HWY_NAMESPACE

#define FP8LAB_GEMM_TILES_END \
  }                           \
  }                           \
  HWY_AFTER_NAMESPACE()
