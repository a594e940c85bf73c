"""The ops on CUDA tensors (a build with FP8LAB_PYTHON_CUDA=ON, docs/python.md): gpu/'s kernels
give the CPU op's (sim/'s) codes, scales, amax and GEMM outputs bit for bit; dequantize and
delayed_update (whose CUDA ops call no gpu/ kernel) run sim/ on host copies; sub-byte quantize raises
NotImplementedError naming what is missing. Skipped, with the reason, without such a build or a GPU."""

import pytest
import torch

import fp8lab

pytestmark = [
    pytest.mark.skipif(not fp8lab._version.__cuda__,
                       reason="fp8lab was built without FP8LAB_PYTHON_CUDA=ON: the ops refuse "
                              "CUDA tensors (test_ops.py checks the message)"),
    pytest.mark.skipif(not torch.cuda.is_available(),
                       reason="torch.cuda.is_available() is false: no GPU to run gpu/ on"),
]

RECIPES = [
    "{scaling: current, fp8_format: E4M3}",
    "{scaling: current}",
    "{scaling: current, power_2_scales: true}",
    "{scaling: tensorwise}",
    "{scaling: rowwise}",
    "{scaling: block}",
    "{scaling: mxfp8, mx_scale_mode: te}",
    "{scaling: mxfp8, mx_scale_mode: floor}",
    "{scaling: mxfp8, mx_scale_mode: rceil, torchao_version: torchao-main}",
    "{scaling: mxfp8, mx_2d: true}",
    "{scaling: static, static_scale: 0.0625}",
]
GEMMS = {"fprop": ("input", "weight"), "dgrad": ("grad_output", "weight"),
         "wgrad": ("grad_output", "input")}
M, N, K = 64, 96, 256  # input [M, K], weight [N, K], grad_output [M, N]
SHAPES = {"input": (M, K), "weight": (N, K), "grad_output": (M, N)}


def operand(name, gen):
    x = torch.randn(SHAPES[name], generator=gen) * 3
    x[0, :5] = torch.tensor([0.0, -0.0, 1e-30, 448.0 * 4, -1e-7])  # zeros, tiny, over range
    return x


def bits_equal(ours, theirs, what):
    ours, theirs = ours.cpu(), theirs.cpu()
    assert ours.shape == theirs.shape, f"{what}: shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
    a = ours.view(torch.int32) if ours.dtype == torch.float32 else ours
    b = theirs.view(torch.int32) if theirs.dtype == torch.float32 else theirs
    differ = (a != b).nonzero()
    assert differ.numel() == 0, (
        f"{what}: {differ.shape[0]} of {a.numel()} differ, first at {differ[0].tolist()}: "
        f"CUDA {ours[tuple(differ[0])].item()!r} (0x{int(a[tuple(differ[0])]) & 0xFFFFFFFF:08x}) "
        f"CPU {theirs[tuple(differ[0])].item()!r} (0x{int(b[tuple(differ[0])]) & 0xFFFFFFFF:08x})")


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("gemm", GEMMS)
def test_quantize_and_scaled_mm_equal_the_cpu_op(recipe, gemm, gen):
    quantized = {}
    for name in GEMMS[gemm]:
        x = operand(name, gen)
        cpu = fp8lab.quantize(x, recipe, name, gemm)
        cuda = fp8lab.quantize(x.cuda(), recipe, name, gemm)
        for part, ours, theirs in zip(("codes", "scale_inv", "amax"), cuda, cpu):
            assert ours.device.type == "cuda"
            bits_equal(ours, theirs, f"{recipe} {name} {gemm} {part}")
        quantized[name] = cpu
    (a, a_s), (b, b_s) = (quantized[n][:2] for n in GEMMS[gemm])
    for accumulation in ("hopper_fast", "hopper_split", "fp32_seq"):
        for out_dtype in (torch.float32, torch.bfloat16):
            cpu = fp8lab.scaled_mm(a, a_s, b, b_s, recipe, gemm, bias=None,
                                   accumulation=accumulation, out_dtype=out_dtype)
            cuda = fp8lab.scaled_mm(a.cuda(), a_s.cuda(), b.cuda(), b_s.cuda(), recipe, gemm,
                                    accumulation=accumulation, out_dtype=out_dtype)
            bits_equal(cuda.float(), cpu.float(), f"{recipe} {gemm} {accumulation} {out_dtype}")
    n = cpu.shape[1]
    bias = torch.randn(n, generator=gen)
    cpu = fp8lab.scaled_mm(a, a_s, b, b_s, recipe, gemm, bias=bias)
    cuda = fp8lab.scaled_mm(a.cuda(), a_s.cuda(), b.cuda(), b_s.cuda(), recipe, gemm,
                            bias=bias.cuda())
    bits_equal(cuda, cpu, f"{recipe} {gemm} with bias")


def test_delayed_quantize_equals_the_cpu_op(gen):
    recipe = "{scaling: delayed, amax_history_len: 4}"
    x = operand("input", gen)
    scale = torch.tensor([37.5])
    cpu = fp8lab.quantize(x, recipe, "input", "fprop", scale=scale)
    cuda = fp8lab.quantize(x.cuda(), recipe, "input", "fprop", scale=scale.cuda())
    for part, ours, theirs in zip(("codes", "scale_inv", "amax"), cuda, cpu):
        bits_equal(ours, theirs, f"delayed {part}")


@pytest.mark.parametrize("gemm", GEMMS)
def test_high_precision_mm_equals_the_cpu_op(gemm, gen):
    a, b = (operand(n, gen) for n in GEMMS[gemm])
    for bf16 in (False, True):
        cpu = fp8lab.high_precision_mm(a, b, gemm, bf16_operands=bf16)
        cuda = fp8lab.high_precision_mm(a.cuda(), b.cuda(), gemm, bf16_operands=bf16)
        bits_equal(cuda, cpu, f"high_precision_mm {gemm} bf16_operands={bf16}")


def test_what_gpu_lacks_raises_not_implemented_naming_it(gen):
    x = operand("input", gen).cuda()
    with pytest.raises(NotImplementedError, match=r"on CUDA tensors: a .* plan with format .* has no GPU quantizer"):
        fp8lab.quantize(x, "{scaling: nvfp4}", "input", "fprop")


def test_dequantize_and_delayed_update_run_sim_on_host_copies(gen):
    # The CUDA ops call no gpu/ kernel for these: they return sim/'s result on the input's device.
    x = operand("input", gen)
    recipe = "{scaling: current}"
    codes, scale_inv, _ = fp8lab.quantize(x, recipe, "input", "fprop")
    cuda = fp8lab.dequantize(codes.cuda(), scale_inv.cuda(), recipe, "input", "fprop")
    assert cuda.is_cuda
    bits_equal(cuda, fp8lab.dequantize(codes, scale_inv, recipe, "input", "fprop"), "dequantize")
    delayed = "{scaling: delayed, amax_history_len: 4}"
    state = (torch.tensor([[3.0], [7.0], [0.5], [0.0]]), torch.ones(1), torch.tensor([5.0]))
    cpu = fp8lab.delayed_update(*state, delayed, "input", 1)
    cuda = fp8lab.delayed_update(*(t.cuda() for t in state), delayed, "input", 1)
    for what, ours, theirs in zip(("history", "scale"), cuda, cpu):
        assert ours.is_cuda, what
        bits_equal(ours, theirs, f"delayed_update {what}")