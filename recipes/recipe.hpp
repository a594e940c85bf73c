// The recipe model: what one FP8 training run quantizes, how, and with which GEMM accumulation.
// (Filled in by the recipes issue.)
#pragma once
