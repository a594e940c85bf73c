"""torch.ops.fp8lab.*: each op against an oracle from torch itself, torch.library.opcheck on
each, and the errors bad input gets (docs/python.md)."""

import pytest
import torch

import fp8lab

CURRENT_E4M3 = "{scaling: current, fp8_format: E4M3}"
# One recipe per scaling fp8lab has (and MX in every E8M0 mode), for opcheck and shapes.
RECIPES = [
    "{scaling: current}",
    "{scaling: current, power_2_scales: true}",
    "{scaling: tensorwise}",
    "{scaling: rowwise}",
    "{scaling: rowwise_with_gw_hp}",
    "{scaling: block}",
    "{scaling: mxfp8, mx_scale_mode: te}",
    "{scaling: mxfp8, mx_scale_mode: floor}",
    "{scaling: mxfp8, mx_scale_mode: ceil}",
    "{scaling: mxfp8, mx_scale_mode: even}",
    "{scaling: mxfp8, mx_scale_mode: rceil}",
    "{scaling: mxfp8, mx_scale_mode: rceil, torchao_version: torchao-main}",
]
OPERANDS = [("input", "fprop"), ("weight", "fprop"), ("grad_output", "dgrad"),
            ("weight", "dgrad"), ("grad_output", "wgrad"), ("input", "wgrad")]
TORCH_DTYPE = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


def bits_message(x, ours, theirs):
    bad = (ours != theirs).nonzero()[:5].tolist()
    return "; ".join(
        f"[{r},{c}] x={x[r, c].item()!r} ours=0x{ours[r, c].item():02x} "
        f"torch=0x{theirs[r, c].item():02x}"
        for r, c in bad
    )


@pytest.mark.parametrize("fmt", ["E4M3", "E5M2"])
@pytest.mark.parametrize("power_2", [False, True])
def test_current_scaling_codes_equal_torch_cast(gen, fmt, power_2):
    # The check: current scaling's codes are torch's (x * scale).to(float8) for values in
    # range. Magnitudes over 2^-20..2^4 reach the subnormals and the rounding at every binade.
    recipe = f"{{scaling: current, fp8_format: {fmt}, power_2_scales: {str(power_2).lower()}}}"
    x = torch.randn(64, 96, generator=gen) * torch.exp2(
        torch.randint(-20, 5, (64, 96), generator=gen).float()
    )
    codes, scale_inv, amax = torch.ops.fp8lab.quantize(x, recipe, "input", "fprop")
    assert amax.item() == x.abs().max().item()
    fmt_name = fp8lab.plan(recipe, "input", "fprop")["format"]
    fp8_max = torch.tensor(torch.finfo(TORCH_DTYPE[fmt_name]).max, dtype=torch.float32)
    if power_2:
        scale = 1.0 / scale_inv.reshape(())  # exact for a power of 2
        assert torch.frexp(scale).mantissa.item() == 0.5, scale.item()
    else:
        scale = fp8_max / amax  # TE's scale: one fp32 division
        assert scale_inv.reshape(()).item() == (1.0 / scale).item()
    theirs = (x * scale).to(TORCH_DTYPE[fmt_name]).view(torch.uint8)
    assert codes.dtype == torch.uint8 and codes.shape == x.shape
    assert codes.count_nonzero() > x.numel() // 2  # not a degenerate all-zero result
    assert torch.equal(codes, theirs), bits_message(x, codes, theirs)


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("operand,gemm", OPERANDS)
def test_quantize_and_dequantize_pass_opcheck(gen, recipe, operand, gemm):
    if not fp8lab.plan(recipe, operand, gemm)["runs_fp8"]:
        pytest.skip(f"{recipe} runs {gemm} in high precision")
    x = torch.randn(64, 160, generator=gen)  # 160: MX and block edges in the last block
    torch.library.opcheck(torch.ops.fp8lab.quantize.default, (x, recipe, operand, gemm))
    codes, scale_inv, _ = torch.ops.fp8lab.quantize(x, recipe, operand, gemm)
    torch.library.opcheck(
        torch.ops.fp8lab.dequantize.default, (codes, scale_inv, recipe, operand, gemm)
    )


@pytest.mark.parametrize("recipe", RECIPES)
@pytest.mark.parametrize("operand,gemm", OPERANDS)
def test_dequantize_is_decode_times_scale_inv(gen, recipe, operand, gemm):
    plan = fp8lab.plan(recipe, operand, gemm)
    if not plan["runs_fp8"]:
        pytest.skip(f"{recipe} runs {gemm} in high precision")
    x = torch.randn(96, 64, generator=gen) * 3
    codes, scale_inv, _ = fp8lab.quantize(x, recipe, operand, gemm)
    block_rows, block_cols = (b if b else n for b, n in zip(plan["block"], x.shape))
    per_element = scale_inv.repeat_interleave(block_rows, 0)[: x.shape[0]]
    per_element = per_element.repeat_interleave(block_cols, 1)[:, : x.shape[1]]
    decoded = codes.view(TORCH_DTYPE[plan["format"]]).float()
    expected = decoded * per_element
    ours = fp8lab.dequantize(codes, scale_inv, recipe, operand, gemm)
    assert torch.equal(ours, expected)
    # And the quantization is close to x: a few ulps of the format, relative to each block.
    assert torch.allclose(ours, x, rtol=0.15, atol=float(per_element.max()) * 0.5)


def integer_operands(gen, m, n, k):
    # Integers in [-8, 8] with a power-of-2 scale are exact in E4M3 and their sums exact in every
    # accumulation model (|sum| < 2^13), so every model gives torch's exact product.
    x = torch.randint(-8, 9, (m, k), generator=gen).float()
    w = torch.randint(-8, 9, (n, k), generator=gen).float()
    dy = torch.randint(-8, 9, (m, n), generator=gen).float()
    x[0, 0] = w[0, 0] = dy[0, 0] = 8.0  # amax 8 in every tensor
    return x, w, dy


@pytest.mark.parametrize("accumulation", ["fp32_seq", "hopper_split", "hopper_fast", "exact"])
@pytest.mark.parametrize(
    "recipe",
    ["{scaling: current, fp8_format: E4M3, power_2_scales: true}",
     "{scaling: block, fp8_format: E4M3}",
     "{scaling: mxfp8, fp8_format: E4M3}"],
)
def test_scaled_mm_of_exact_operands_equals_torch(gen, recipe, accumulation):
    x, w, dy = integer_operands(gen, 48, 64, 256)
    tensors = {"input": x, "weight": w, "grad_output": dy}
    expected = {"fprop": x @ w.T, "dgrad": dy @ w, "wgrad": dy.T @ x}
    for gemm in ("fprop", "dgrad", "wgrad"):
        (a_name, _), (b_name, _) = fp8lab._C.gemm_operands(gemm)
        qa = fp8lab.quantize(tensors[a_name], recipe, a_name, gemm)
        qb = fp8lab.quantize(tensors[b_name], recipe, b_name, gemm)
        out = fp8lab.scaled_mm(qa[0], qa[1], qb[0], qb[1], recipe, gemm,
                               accumulation=accumulation)
        assert expected[gemm].count_nonzero() > 0
        assert torch.equal(out, expected[gemm]), (gemm, (out - expected[gemm]).abs().max())


def test_scaled_mm_bias_bf16_and_opcheck(gen):
    recipe = "{scaling: current, fp8_format: E4M3, power_2_scales: true}"
    x, w, _ = integer_operands(gen, 16, 32, 64)
    bias = torch.randn(32, generator=gen)
    qx = fp8lab.quantize(x, recipe, "input", "fprop")
    qw = fp8lab.quantize(w, recipe, "weight", "fprop")
    args = (qx[0], qx[1], qw[0], qw[1], recipe, "fprop", bias, "fp32_seq", torch.bfloat16)
    out = torch.ops.fp8lab.scaled_mm(*args)
    assert out.dtype == torch.bfloat16
    assert torch.equal(out, (x @ w.T + bias).to(torch.bfloat16))
    torch.library.opcheck(torch.ops.fp8lab.scaled_mm.default, args)
    torch.library.opcheck(torch.ops.fp8lab.scaled_mm.default, args[:6])


def test_scaled_mm_accumulation_models_differ_where_they_should(gen):
    # Per-tensor scales over K = 1024: hopper_fast never promotes, so its truncations add up where
    # fp32_seq rounds each sum; the argument must reach sim (a model ignored would give equal bits).
    recipe = CURRENT_E4M3
    x, w = torch.randn(32, 1024, generator=gen), torch.randn(32, 1024, generator=gen)
    qx = fp8lab.quantize(x, recipe, "input", "fprop")
    qw = fp8lab.quantize(w, recipe, "weight", "fprop")
    out = {m: fp8lab.scaled_mm(qx[0], qx[1], qw[0], qw[1], recipe, "fprop", accumulation=m)
           for m in ("fp32_seq", "hopper_fast")}
    assert not torch.equal(out["fp32_seq"], out["hopper_fast"])
    # The recipe's own fprop model (hopper_fast by default) when accumulation is None.
    default = fp8lab.scaled_mm(qx[0], qx[1], qw[0], qw[1], recipe, "fprop")
    assert fp8lab.plan(recipe, "input", "fprop")["accumulation"] == "hopper_fast"
    assert torch.equal(default, out["hopper_fast"])


def sequential_fp32_gemm(a, b):
    # The oracle of sim::high_precision_gemm: acc = RN(acc + RN(a_k * b_k)) for k = 0, 1, ...,
    # each step one fp32 multiply and one fp32 add of torch's (no FMA on these elementwise ops).
    acc = torch.zeros(a.shape[0], b.shape[0])
    for k in range(a.shape[1]):
        acc = acc + a[:, k, None] * b[None, :, k]
    return acc


def test_high_precision_mm_is_the_sequential_fp32_sum(gen):
    x, w, dy = (torch.randn(s, generator=gen) for s in ((24, 40), (16, 40), (24, 16)))
    bias = torch.randn(16, generator=gen)
    expected = {"fprop": sequential_fp32_gemm(x, w) + bias,
                "dgrad": sequential_fp32_gemm(dy, w.T.contiguous()),
                "wgrad": sequential_fp32_gemm(dy.T.contiguous(), x.T.contiguous())}
    operands = {"fprop": (x, w), "dgrad": (dy, w), "wgrad": (dy, x)}
    for gemm, (a, b) in operands.items():
        out = fp8lab.high_precision_mm(a, b, gemm, bias if gemm == "fprop" else None)
        assert torch.equal(out, expected[gemm]), (gemm, (out - expected[gemm]).abs().max())
    torch.library.opcheck(torch.ops.fp8lab.high_precision_mm.default, (x, w, "fprop", bias))
    args = (dy, x, "wgrad", None, True, torch.bfloat16)
    torch.library.opcheck(torch.ops.fp8lab.high_precision_mm.default, args)
    bf16 = fp8lab.high_precision_mm(*args)
    rounded = sequential_fp32_gemm(dy.bfloat16().float().T.contiguous(),
                                   x.bfloat16().float().T.contiguous())
    assert bf16.dtype == torch.bfloat16 and torch.equal(bf16, rounded.bfloat16())
    with pytest.raises(ValueError, match=r"have K = 40 and 24 as operands of dgrad"):
        fp8lab.high_precision_mm(x, x, "dgrad")


def test_k_not_a_multiple_of_the_block_is_a_partial_last_block(gen):
    # sim keeps a partial edge block of its valid elements (sim/tensor.hpp): the same codes and
    # scales as the zero-padded tensor, since zeros change no block's amax.
    recipe = "{scaling: mxfp8}"
    x = torch.randn(8, 80, generator=gen)  # 80 = 2 x 32 + 16
    codes, scale_inv, _ = fp8lab.quantize(x, recipe, "input", "fprop")
    padded = torch.nn.functional.pad(x, (0, 16))
    pcodes, pscale_inv, _ = fp8lab.quantize(padded, recipe, "input", "fprop")
    assert scale_inv.shape == (8, 3)
    assert torch.equal(codes, pcodes[:, :80]) and torch.equal(scale_inv, pscale_inv)


def test_delayed_scaling_state(gen):
    recipe = "{scaling: delayed, amax_history_len: 4, amax_compute_algo: max, interval: 2}"
    delayed = fp8lab.plan(recipe, "input", "fprop")["delayed"]
    assert delayed["amax_history_len"] == 4
    history, scale = torch.zeros(4, 2), torch.ones(2)
    x = torch.randn(16, 32, generator=gen) * 5
    w = torch.randn(8, 32, generator=gen)
    with pytest.raises(ValueError, match="pass scale"):
        fp8lab.quantize(x, recipe, "input", "fprop")
    cx, sx, ax = fp8lab.quantize(x, recipe, "input", "fprop", scale[0:1])
    _, _, aw = fp8lab.quantize(w, recipe, "weight", "fprop", scale[1:2])
    assert sx.item() == 1.0 and torch.equal(cx, x.to(torch.float8_e4m3fn).view(torch.uint8))
    amax = torch.stack([ax, aw])
    args = (history, scale, amax, recipe, "input", 0)
    torch.library.opcheck(torch.ops.fp8lab.delayed_update.default, args)
    history1, scale1 = fp8lab.delayed_update(*args)
    # Rolled: row 0 cleared, the step's amax in the last row; scale = RN(448 / max of history).
    assert torch.equal(history1[0], torch.zeros(2)) and torch.equal(history1[3], amax)
    assert torch.equal(scale1, torch.tensor(448.0) / amax)
    assert torch.equal(history, torch.zeros(4, 2))  # functional: the inputs are unchanged
    # Update 1 under interval 2 rolls the history but keeps the scales.
    history2, scale2 = fp8lab.delayed_update(history1, scale1, amax / 2, recipe, "input", 1)
    assert torch.equal(scale2, scale1) and torch.equal(history2[3], amax / 2)
    # The next cast uses the new scale.
    cx2, sx2, _ = fp8lab.quantize(x, recipe, "input", "fprop", scale1[0:1])
    assert torch.equal(cx2, (x * scale1[0]).to(torch.float8_e4m3fn).view(torch.uint8))
    assert sx2.item() == (1.0 / scale1[0]).item()
    torch.library.opcheck(torch.ops.fp8lab.quantize.default, (x, recipe, "input", "fprop",
                                                              scale1[0:1]))


def test_grad_output_of_hybrid_is_e5m2_and_plan_reports_it():
    assert fp8lab.plan("", "grad_output", "dgrad")["format"] == "e5m2"
    assert fp8lab.plan("", "input", "fprop")["format"] == "e4m3"
    p = fp8lab.plan("{scaling: mxfp8}", "weight", "dgrad")
    assert (p["kind"], p["block"], p["axis"], p["k_is_cols"]) == ("mx", (32, 1), "columnwise", False)


# ---- bad input: TypeError / ValueError naming what was wrong and what is accepted ---------------

def test_wrong_dtype_is_a_type_error():
    with pytest.raises(TypeError, match=r"x has dtype torch.float64; accepted: torch.float32"):
        fp8lab.quantize(torch.zeros(4, 4, dtype=torch.float64), CURRENT_E4M3, "input", "fprop")
    codes = torch.zeros(4, 4, dtype=torch.uint8)
    with pytest.raises(TypeError, match=r"scale_inv has dtype torch.float16"):
        fp8lab.dequantize(codes, torch.ones(1, 1, dtype=torch.float16), CURRENT_E4M3, "input",
                          "fprop")
    with pytest.raises(TypeError, match=r"out_dtype torch.float16; accepted"):
        fp8lab.scaled_mm(codes, torch.ones(1, 1), codes, torch.ones(1, 1), CURRENT_E4M3, "fprop",
                         out_dtype=torch.float16)


def test_non_contiguous_and_wrong_shapes_are_value_errors():
    x = torch.randn(8, 16)
    with pytest.raises(ValueError, match=r"x is not contiguous.*accepted: a contiguous tensor"):
        fp8lab.quantize(x.T, CURRENT_E4M3, "input", "fprop")
    with pytest.raises(ValueError, match=r"x has shape \[128\]; accepted: a 2-D tensor"):
        fp8lab.quantize(x.reshape(-1), CURRENT_E4M3, "input", "fprop")
    codes, scale_inv, _ = fp8lab.quantize(x, "{scaling: mxfp8}", "input", "fprop")
    with pytest.raises(ValueError, match=r"scale_inv has shape \[1, 8\]; accepted: \[8, 1\]"):
        fp8lab.dequantize(codes, scale_inv.T.contiguous(), "{scaling: mxfp8}", "input", "fprop")
    with pytest.raises(ValueError, match=r"bias has shape \[3\]; accepted: \[8\]"):
        qw = fp8lab.quantize(x, CURRENT_E4M3, "weight", "fprop")
        q = fp8lab.quantize(x, CURRENT_E4M3, "input", "fprop")
        fp8lab.scaled_mm(q[0], q[1], qw[0], qw[1], CURRENT_E4M3, "fprop", bias=torch.ones(3))


def test_recipe_errors_carry_the_recipe_readers_message():
    x = torch.randn(4, 32)
    with pytest.raises(ValueError, match=r"fp8_fromat.*accepted:.*fp8_format"):
        fp8lab.quantize(x, "{scaling: current, fp8_fromat: E4M3}", "input", "fprop")
    with pytest.raises(ValueError, match=r"HYBRD.*accepted: HYBRID, E4M3, E5M2"):
        fp8lab.quantize(x, "{fp8_format: HYBRD}", "input", "fprop")
    with pytest.raises(ValueError, match=r"operand 'inputs'; accepted: input, weight, grad_output"):
        fp8lab.quantize(x, CURRENT_E4M3, "inputs", "fprop")
    with pytest.raises(ValueError, match=r"gemm 'forward'; accepted: fprop, dgrad, wgrad"):
        fp8lab.plan(CURRENT_E4M3, "input", "forward")
    with pytest.raises(ValueError, match=r"not an operand of gemm = dgrad"):
        fp8lab.quantize(x, CURRENT_E4M3, "input", "dgrad")
    with pytest.raises(ValueError, match=r"runs wgrad in high precision"):
        fp8lab.quantize(x, "{scaling: rowwise_with_gw_hp}", "input", "wgrad")
    with pytest.raises(ValueError, match=r"scale is the state of delayed scaling"):
        fp8lab.quantize(x, CURRENT_E4M3, "input", "fprop", torch.ones(1))
    with pytest.raises(ValueError, match=r"accumulation 'fast'; accepted: fp32_seq"):
        q = fp8lab.quantize(x, CURRENT_E4M3, "input", "fprop")
        fp8lab.scaled_mm(q[0], q[1], q[0], q[1], CURRENT_E4M3, "fprop", accumulation="fast")
    with pytest.raises(ValueError, match=r"keeps no state; accepted: a recipe with scaling: delayed"):
        fp8lab.delayed_update(torch.zeros(4, 1), torch.ones(1), torch.ones(1), CURRENT_E4M3,
                              "input", 0)
    with pytest.raises(ValueError, match=r"amax_history has 4 rows; accepted: .* = 1024"):
        fp8lab.delayed_update(torch.zeros(4, 1), torch.ones(1), torch.ones(1), "", "input", 0)


def test_cuda_tensors_raise_not_implemented_naming_what_is_missing():
    # No GPU needed: the CUDA kernel is called directly through the dispatcher. A build with
    # FP8LAB_PYTHON_CUDA=ON runs gpu/ instead (test_ops_cuda.py).
    if fp8lab._version.__cuda__:
        pytest.skip("this build has the CUDA kernels (FP8LAB_PYTHON_CUDA=ON): test_ops_cuda.py")
    op = torch.ops.fp8lab.quantize.default
    assert torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CUDA")
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
    with pytest.raises(NotImplementedError,
                       match=r"fp8lab::quantize on CUDA tensors: this build of fp8lab has no CUDA "
                             r"kernels.*FP8LAB_PYTHON_CUDA=ON"):
        op.redispatch(keys, torch.zeros(2, 2), CURRENT_E4M3, "input", "fprop", None)
