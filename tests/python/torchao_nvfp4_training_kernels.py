"""torchao 0.18's NVFP4TrainingConfig quantizers on a CPU: its own Triton kernels
(torchao/prototype/moe_training/nvfp4_training/{quantize_2d_triton,hadamard_amax_triton,
hadamard_quantize_row_col_triton}.py) run under Triton's interpreter (TRITON_INTERPRET=1, set
before triton is imported: run this file as its own process).

What is not torchao's: the kernels end in inline PTX (cvt.rn.satfinite.e2m1x2.f32 and
cvt.rs.satfinite.e2m1x4.f32, sm_100 only), which the interpreter cannot run; `e2m1_rn` and
`e2m1_rs` below stand in for them (the PTX ISA's round-to-nearest-even with saturation to +-6, and
the stochastic rule fp4-formats.md §4 writes down, one byte of the Philox word per element). The
custom ops' host wrappers ask CUDA for the SM count, so the JIT kernels are launched directly with
the wrappers' arguments; tile sizes are the autotuner's candidates (`BLOCK`), which change which
Philox counter an element's SR bits come from but no round-to-nearest byte.

    python torchao_nvfp4_training_kernels.py ROWS COLS SEED OFFSET_COL OFFSET_ROW IN PREFIX ...
IN holds ROWS * COLS fp32 values (the kernels take their bf16 rounding, as nvfp4_mm_triton does);
writes PREFIX.<w|x|dy>.<name> raw little-endian files (main() below): codes as torchao packs them,
scales unswizzled to [outer, inner / 16] uint8 (E4M3 bytes), amaxes as fp32.
"""

import os
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.utils._triton as _torch_triton  # noqa: E402

# has_triton() is False without a GPU, and the kernel modules then define stubs only.
_torch_triton.has_triton = lambda: True

import torchao.prototype  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# The package's __init__ imports MoE kernels that do not load without a GPU; the three kernel
# modules need only their own package.
_pkg = types.ModuleType("torchao.prototype.moe_training")
_pkg.__path__ = [os.path.join(os.path.dirname(torchao.prototype.__file__), "moe_training")]
sys.modules.setdefault("torchao.prototype.moe_training", _pkg)

from torchao.prototype.moe_training.nvfp4_training import hadamard_amax_triton as amax_k  # noqa
from torchao.prototype.moe_training.nvfp4_training import hadamard_utils as hu  # noqa: E402
from torchao.prototype.moe_training.nvfp4_training import quantize_2d_triton as q2d  # noqa
from torchao.prototype.moe_training.nvfp4_training import (  # noqa: E402
    hadamard_quantize_row_col_triton as rowcol,
)

# TE's wgrad sign vector (fp8lab's kTeRhtSignMask 0xD7E8): NVFP4TrainingConfig(rht_sign_vector=...).
TE_SIGNS = [1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1]
NUM_SMS = 4
GROUP_SIZE_N = 8


@triton.jit
def _e2m1_code(x):
    """cvt.rn.satfinite.e2m1 of one fp32 value: RN-even onto 0 .5 1 1.5 2 3 4 6, sign kept."""
    a = tl.abs(x)
    code = tl.where(a <= 0.25, 0, tl.where(a < 0.75, 1, tl.where(a <= 1.25, 2, tl.where(
        a < 1.75, 3, tl.where(a <= 2.5, 4, tl.where(a < 3.5, 5, tl.where(a <= 5.0, 6, 7)))))))
    sign = (x.to(tl.uint32, bitcast=True) >> 31).to(tl.int32) * 8
    return (code + sign).to(tl.uint8)


@triton.jit
def e2m1_rn(x_pairs):
    even, odd = x_pairs
    return _e2m1_code(even) | (_e2m1_code(odd) << 4)


@triton.jit
def _e2m1_sr(x, byte):
    a = tl.abs(x)
    u = byte.to(tl.float32) / 256.0
    step = tl.where(a < 2.0, 0.5, tl.where(a < 4.0, 1.0, 2.0))
    t = a + u * step
    step_t = tl.where(t < 2.0, 0.5, tl.where(t < 4.0, 1.0, 2.0))
    q = tl.minimum(tl.floor(t / step_t) * step_t, 6.0)
    return _e2m1_code(tl.where(x.to(tl.uint32, bitcast=True) >> 31 == 1, -q, q))


@triton.jit
def e2m1_rs(x_pairs, rbits):
    even, odd = x_pairs
    r = rbits.to(tl.uint32, bitcast=True)
    return _e2m1_sr(even, r & 0xFF) | (_e2m1_sr(odd, (r >> 8) & 0xFF) << 4)


# The interpreter keeps bf16 tensors as their uint16 bits and runs numpy on those bits: its bf16
# arithmetic and tl.dot are wrong (tl.abs and tl.max of non-negative values are right). On the GPU
# a bf16 op is done in fp32 and rounded RN to bf16 (Triton has no bf16 divide; the kernels divide
# bf16 amaxes by 6.0), and a bf16 tl.dot is an MMA with fp32 accumulation; both are modelled here
# so: bf16 operands widened exactly, the op in fp32, a bf16 result rounded RN (torch's rounding).
# numpy's fp32 matmul sums in another order than the MMA; docs/fp4.md says where that shows.
from triton.runtime import interpreter as _interp  # noqa: E402

_binary_op = _interp.InterpreterBuilder.binary_op
_create_dot = _interp.InterpreterBuilder.create_dot


def _bf16_to_fp32(h):
    return _interp.TensorHandle((h.data.astype(np.uint32) << 16).view(np.float32), tl.float32)


def _fp32_to_bf16(data):
    bits = torch.from_numpy(np.ascontiguousarray(data, dtype=np.float32)).bfloat16()
    return bits.view(torch.int16).numpy().view(np.uint16)


def _binary_op_bf16(self, lhs, rhs, op):
    if lhs.dtype.scalar != tl.bfloat16 or rhs.dtype.scalar != tl.bfloat16:
        return _binary_op(self, lhs, rhs, op)
    out = _binary_op(self, _bf16_to_fp32(lhs), _bf16_to_fp32(rhs), op)
    if out.data.dtype == np.float32:
        return _interp.TensorHandle(_fp32_to_bf16(out.data), tl.bfloat16)
    return out


def _create_dot_bf16(self, a, b, d, input_precision, max_num_imprecise_acc):
    if a.dtype.scalar == tl.bfloat16:
        a = _bf16_to_fp32(a)
    if b.dtype.scalar == tl.bfloat16:
        b = _bf16_to_fp32(b)
    return _create_dot(self, a, b, d, input_precision, max_num_imprecise_acc)


_cast_impl = _interp.InterpreterBuilder.cast_impl
_fp_to_fp = _interp.InterpreterBuilder.create_fp_to_fp
# The interpreter's own fp32 -> bf16 / fp8 casts truncate (or round half up without a carry into
# the exponent); the GPU's cvt.rn.bf16.f32 and cvt.rn.satfinite.e4m3x2.f32 round to nearest even,
# as torch's casts do (the kernels clamp to 448 before the E4M3 cast, so saturation never acts).
_TORCH_DTYPES = {tl.bfloat16: (torch.bfloat16, torch.int16, np.uint16),
                 tl.float8e4nv: (torch.float8_e4m3fn, torch.uint8, np.uint8)}


def _round_fp32(src, dst):
    if src.dtype.scalar == tl.float32 and dst.scalar in _TORCH_DTYPES:
        to, view, np_view = _TORCH_DTYPES[dst.scalar]
        out = torch.from_numpy(np.ascontiguousarray(src.data, dtype=np.float32)).to(to)
        return _interp.TensorHandle(out.view(view).numpy().view(np_view), dst.scalar)
    if src.dtype.scalar in _TORCH_DTYPES and dst.scalar == tl.float32:
        to, view, np_view = _TORCH_DTYPES[src.dtype.scalar]
        wide = torch.from_numpy(np.ascontiguousarray(src.data).view(np_view)).view(to).float()
        return _interp.TensorHandle(wide.numpy(), tl.float32)
    return None


def _cast_impl_rn(self, src, dst_type):
    out = _round_fp32(src, dst_type)
    return out if out is not None else _cast_impl(self, src, dst_type)


def _fp_to_fp_rn(self, src, dst_type, rounding_mode):
    out = _round_fp32(src, dst_type)
    return out if out is not None else _fp_to_fp(self, src, dst_type, rounding_mode)


_interp.InterpreterBuilder.cast_impl = _cast_impl_rn
_interp.InterpreterBuilder.create_fp_to_fp = _fp_to_fp_rn
for _name in ("create_fp_ext", "create_fp_trunc"):
    setattr(_interp.InterpreterBuilder, _name,
            lambda self, src, dst_type: _cast_impl_rn(self, src, dst_type))
_interp.InterpreterBuilder.binary_op = _binary_op_bf16
_interp.InterpreterBuilder.create_dot = _create_dot_bf16

hu.convert_8xfp32_to_4xfp4_packed = e2m1_rn
hu.convert_8xfp32_to_4xfp4_packed_rs = e2m1_rs
q2d.convert_8xfp32_to_4xfp4_packed = e2m1_rn


def unswizzle(sf, outer, inner):
    """_swizzle_scales' (outer/128, inner/64, 32, 16) layout back to [outer, inner / 16]."""
    return (sf.view(torch.uint8).reshape(outer // 128, inner // 64, 32, 4, 4)
            .permute(0, 3, 2, 1, 4).reshape(outer, inner // 16))


def weight2d(a):
    m, n = a.shape
    amax = a.float().abs().max()
    codes = torch.zeros((m, n // 2), dtype=torch.uint8)
    sf = torch.empty((m // 128, n // 64, 32, 16), dtype=torch.float8_e4m3fn)
    t_codes = torch.zeros((n, m // 2), dtype=torch.uint8)
    t_sf = torch.empty((n // 128, m // 64, 32, 16), dtype=torch.float8_e4m3fn)
    q2d.triton_quantize_2d_weight.fn[(NUM_SMS,)](
        a, codes, sf, t_codes, t_sf, amax, m, n, BLOCK_M=128, BLOCK_N=128,
        GROUP_SIZE_N=GROUP_SIZE_N, NUM_SMS=NUM_SMS, NUM_STAGES=1)
    return {"codes": codes, "scales": unswizzle(sf, m, n), "t_codes": t_codes,
            "t_scales": unswizzle(t_sf, n, m), "amax": amax.reshape(1)}


def rht_amax(a, signs):
    m, n = a.shape
    b = hu.get_rht_matrix(tuple(signs), "cpu", torch.bfloat16, 16)
    col = torch.zeros((), dtype=torch.float32)
    row = torch.zeros((), dtype=torch.float32)
    amax_k._hadamard_amax_kernel.fn[(NUM_SMS,)](
        a, b, col, row, m, n, BLOCK_M=64, BLOCK_N=64, GROUP_SIZE_N=GROUP_SIZE_N,
        NUM_SMS=NUM_SMS, NUM_STAGES=2)
    return col, row


def rht_quantize_row_col(a, signs, sr, seeds):
    m, n = a.shape
    col_amax, row_amax = rht_amax(a, signs)
    b = hu.get_rht_matrix(tuple(signs), "cpu", torch.bfloat16, 16)
    col_c = torch.empty((n, m // 2), dtype=torch.uint8)
    col_sf = torch.empty((n // 128, m // 64, 32, 16), dtype=torch.float8_e4m3fn)
    row_c = torch.empty((m, n // 2), dtype=torch.uint8)
    row_sf = torch.empty((m // 128, n // 64, 32, 16), dtype=torch.float8_e4m3fn)
    # nvfp4_mm_triton.backward: col_seed_base = sr_seed, row_seed_base = sr_seed ^ 1, offsets
    # from torch.randint on the CUDA generator (given here).
    seed, offset_col, offset_row = (torch.tensor([v], dtype=torch.int64) for v in seeds)
    rowcol._hadamard_quantize_row_col_kernel.fn[(NUM_SMS,)](
        a, b, col_amax, row_amax, col_c, col_sf, row_c, row_sf, seed, offset_col, seed ^ 1,
        offset_row, m, n, BLOCK_M=128, BLOCK_N=128, GROUP_SIZE_N=GROUP_SIZE_N, NUM_SMS=NUM_SMS,
        NUM_STAGES=2, STOCHASTIC_ROUNDING=sr)
    return {"col_codes": col_c, "col_scales": unswizzle(col_sf, n, m), "row_codes": row_c,
            "row_scales": unswizzle(row_sf, m, n), "col_amax": col_amax.reshape(1),
            "row_amax": row_amax.reshape(1)}


def main(argv):
    """ROWS COLS SEED OFFSET_COL OFFSET_ROW then pairs IN OUT_PREFIX: per input, the weight's 2-D
    quantization (OUT_PREFIX.w.*), the input's row and RHT-column quantization (.x.*) and
    grad_output's with stochastic rounding (.dy.*: col_seed_base SEED, row_seed_base SEED ^ 1, the
    two offsets as nvfp4_mm_triton.backward draws them from the CUDA generator)."""
    rows, cols = int(argv[1]), int(argv[2])
    seeds = [int(v) for v in argv[3:6]]
    pairs = argv[6:]
    if len(pairs) % 2 or not pairs:
        raise SystemExit("usage: ROWS COLS SEED OFFSET_COL OFFSET_ROW IN OUT_PREFIX [IN OUT_PREFIX ...]")
    for src, prefix in zip(pairs[0::2], pairs[1::2]):
        x = torch.frombuffer(bytearray(open(src, "rb").read()), dtype=torch.float32)
        a = x.reshape(rows, cols).bfloat16().contiguous()
        for tag, out in (("w", weight2d(a)),
                         ("x", rht_quantize_row_col(a, TE_SIGNS, False, [0, 0, 0])),
                         ("dy", rht_quantize_row_col(a, TE_SIGNS, True, seeds))):
            for name, t in out.items():
                with open(f"{prefix}.{tag}.{name}", "wb") as f:
                    f.write(t.contiguous().numpy().tobytes())


if __name__ == "__main__":
    main(sys.argv)
