// x^k and log2 for the optimizer-state quantizers (COAT's dynamic range expansion), computed from
// IEEE double additions, multiplications and divisions only: no libm call, whose pow/log2/exp2
// pick other code paths (and bits) per CPU (glibc's FMA ifuncs, MKL's VML). With fp8lab's
// -ffp-contract=off every compiler and CPU gives the same bits. Accurate to a few double ulps,
// then rounded once to fp32: not the correctly rounded powf, and not CUDA's powf either (COAT's
// kernel calls it; its bits are CUDA's own), so the fp32 results can differ from both by an ulp.
#pragma once

namespace fp8lab::sim::optim {

// log2(x) for a finite x > 0, in double.
double exact_log2(double x);
// 2^y in double: 0 below 2^-1100, +inf above 2^1024.
double exact_exp2(double y);
// x^k for x >= 0 and k >= 0 as C's powf defines the special cases COAT's kernel reaches:
// x^0 = 1 (0^0 and NaN^0 included), NaN^k = NaN for k > 0, 0^k = 0 for k > 0, 1^k = 1,
// x^inf = 0 (x < 1) or inf (x > 1);
// else exp2(k log2 x) rounded to fp32.
float exact_power(float x, float k);

}  // namespace fp8lab::sim::optim
