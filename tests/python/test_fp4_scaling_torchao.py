"""MXFP4, MXFP6 and NVFP4 in sim against the real torchao 0.18 (docs/fp4.md): 0 differing bytes
(codes as torchao packs them, raw scale bytes) on finite inputs, equal decoded values on NaN and
Inf inputs. sim's side comes from the sim_fp4_quantize program (FP8LAB_SIM_FP4_QUANTIZE; ctest
sets it: sim_fp4_scaling_torchao_test)."""

import os
import subprocess

import pytest
import torch
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
from torchao.prototype.mx_formats.mx_tensor import to_mx
from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale

TOOL = os.environ.get("FP8LAB_SIM_FP4_QUANTIZE")
pytestmark = pytest.mark.skipif(
    not TOOL, reason="FP8LAB_SIM_FP4_QUANTIZE (the sim_fp4_quantize program) is not set; "
    "ctest -R sim_fp4_scaling_torchao_test sets it")

MX_FORMATS = {"mxfp4": torch.float4_e2m1fn_x2, "mxfp6_e2m3": DTYPE_FP6_E2M3,
              "mxfp6_e3m2": DTYPE_FP6_E3M2}
MX_MODES = {"floor": ScaleCalculationMode.FLOOR, "ceil": ScaleCalculationMode.CEIL,
            "even": ScaleCalculationMode.EVEN, "rceil": ScaleCalculationMode.RCEIL}
# (exponent bits, mantissa bits, bias) of the element formats, for decoding.
ELEMENT = {"mxfp4": (2, 1, 1), "nvfp4": (2, 1, 1), "mxfp6_e2m3": (2, 3, 1), "mxfp6_e3m2": (3, 2, 3)}


def sim(tmp_path, fmt, mode, blocks, x):
    rows, cols = x.shape
    src = tmp_path / "x.bin"
    src.write_bytes(x.contiguous().numpy().tobytes())
    prefix = tmp_path / "out"
    subprocess.run([TOOL, fmt, mode, blocks, str(rows), str(cols), str(src), str(prefix)],
                   check=True)
    codes = torch.frombuffer(bytearray((tmp_path / "out.codes").read_bytes()), dtype=torch.uint8)
    scales = torch.frombuffer(bytearray((tmp_path / "out.scales").read_bytes()), dtype=torch.uint8)
    glob = None
    if fmt == "nvfp4":
        glob = torch.frombuffer(bytearray((tmp_path / "out.global").read_bytes()),
                                dtype=torch.float32)
    return codes, scales, glob


def torchao(fmt, mode, x):
    """torchao's bytes for x (rows of blocks along the last dimension): codes, scales, global."""
    if fmt == "nvfp4":
        pts = per_tensor_amax_to_scale(torch.max(torch.abs(x)))
        scales, codes = nvfp4_quantize(x, 16, pts)
        amax = torch.max(torch.abs(x)).reshape(1)
        glob = torch.cat([amax, (1.0 / pts).reshape(1), pts.reshape(1)])
        return codes.view(torch.uint8).flatten(), scales.view(torch.uint8).flatten(), glob
    scales, codes = to_mx(x, MX_FORMATS[fmt], 32, MX_MODES[mode])
    return codes.view(torch.uint8).flatten(), scales.view(torch.uint8).flatten(), None


def unpacked(fmt, codes):
    if fmt in ("mxfp4", "nvfp4"):
        return torch.stack([codes & 0xF, codes >> 4], dim=-1).flatten()
    return codes


def decode_elements(fmt, codes):
    e, m, bias = ELEMENT[fmt]
    c = unpacked(fmt, codes).to(torch.int32)
    sign = torch.where((c >> (e + m)) & 1 == 1, -1.0, 1.0)
    exp = (c >> m) & ((1 << e) - 1)
    man = (c & ((1 << m) - 1)).float()
    normal = (1.0 + man / (1 << m)) * torch.exp2((exp - bias).float())
    sub = man / (1 << m) * 2.0 ** (1 - bias)
    return sign * torch.where(exp == 0, sub, normal)


def decoded(fmt, codes, scales, glob, shape):
    """Element values times their block scale (times the global decode scale for NVFP4)."""
    rows, cols = shape
    block = 16 if fmt == "nvfp4" else 32
    if fmt == "nvfp4":
        s = scales.view(torch.float8_e4m3fn).float() * glob[2]
    else:
        s = torch.where(scales == 255, torch.nan, torch.exp2(scales.float() - 127))
    s = s.reshape(rows, cols // block).repeat_interleave(block, dim=1)
    return decode_elements(fmt, codes).reshape(rows, cols) * s


def bytes_message(name, x, ours, theirs):
    bad = (ours != theirs).nonzero().flatten()[:5].tolist()
    return f"{name}: {(ours != theirs).sum().item()} of {ours.numel()} bytes differ; " + "; ".join(
        f"[{i}] ours=0x{ours[i].item():02x} torchao=0x{theirs[i].item():02x}" for i in bad)


def random_inputs(gen, rows, cols):
    """Gaussians over a wide range of block magnitudes, bf16 values (exact ties) and the
    adversarial blocks: tiny blocks beside huge ones (torchao's 2^-6 scale floor), exact
    E2M1/FP6 grid points and midpoints at every scale, zero blocks, fp32 subnormals, an all-zero
    tensor and a tensor of one value."""
    out = []
    g = torch.randn(rows, cols, generator=gen)
    span = torch.randint(-30, 30, (rows, cols // 16), generator=gen).float()
    out.append(("gaussian", g * torch.exp2(span).repeat_interleave(16, dim=1)))
    out.append(("bf16", (g * 8).bfloat16().float()))
    adv = g.clone()
    adv[0::4] *= 1e-6
    adv[1::4] *= 1e4
    grid = torch.tensor([0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0,
                         7.0, 7.5, 7.75, 8.0, 12.0, 14.0, 28.0, 30.0, 32.0])
    pick = torch.randint(0, grid.numel(), (rows // 4, cols), generator=gen)
    sign = torch.where(torch.rand(rows // 4, cols, generator=gen) < 0.5, -1.0, 1.0)
    adv[2::4] = grid[pick] * sign * torch.exp2(torch.randint(-20, 20, (rows // 4, 1),
                                                             generator=gen).float())
    adv[3::4, : cols // 2] = 0.0
    adv[3::4, cols // 2:] = torch.randn(rows // 4, cols // 2, generator=gen) * 1e-39
    out.append(("adversarial", adv))
    out.append(("zeros", torch.zeros(rows, cols)))
    out.append(("constant", torch.full((rows, cols), -3.0)))
    out.append(("huge", g.clamp(-3.0, 3.0) * 1.1e38))
    return out


SHAPE = (128, 256)
COUNT = {"bytes": 0, "cases": 0}


@pytest.mark.parametrize("fmt,mode", [("nvfp4", "torchao")] +
                         [(f, m) for f in MX_FORMATS for m in MX_MODES])
@pytest.mark.parametrize("blocks", ["rowwise", "columnwise"])
def test_finite_inputs_give_torchaos_bytes(tmp_path, gen, fmt, mode, blocks):
    for name, x in random_inputs(gen, *SHAPE):
        ours_codes, ours_scales, ours_glob = sim(tmp_path, fmt, mode, blocks, x)
        ref = x.t().contiguous() if blocks == "columnwise" else x
        codes, scales, glob = torchao(fmt, mode, ref)
        assert torch.equal(ours_scales, scales), bytes_message(f"{name} scales", x, ours_scales,
                                                               scales)
        assert torch.equal(ours_codes, codes), bytes_message(f"{name} codes", x, ours_codes,
                                                             codes)
        if glob is not None:
            assert torch.equal(ours_glob.view(torch.int32), glob.view(torch.int32)), (
                f"{name} global: ours {ours_glob.tolist()} torchao {glob.tolist()}")


@pytest.mark.parametrize("fmt,mode", [("nvfp4", "torchao")] +
                         [(f, m) for f in MX_FORMATS for m in MX_MODES])
def test_nan_and_inf_inputs_decode_as_torchao(tmp_path, gen, fmt, mode):
    rows, cols = SHAPE
    for what in ("nan", "inf", "-inf", "nan_and_inf"):
        x = torch.randn(rows, cols, generator=gen)
        idx = torch.randint(0, rows * cols, (40,), generator=gen)
        value = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}.get(what)
        if value is None:
            x.view(-1)[idx[:20]] = float("nan")
            x.view(-1)[idx[20:]] = float("inf")
        else:
            x.view(-1)[idx] = value
        ours_codes, ours_scales, ours_glob = sim(tmp_path, fmt, mode, "rowwise", x)
        codes, scales, glob = torchao(fmt, mode, x)
        ours = decoded(fmt, ours_codes, ours_scales, ours_glob, x.shape)
        theirs = decoded(fmt, codes, scales, glob, x.shape)
        assert torch.equal(ours.isnan(), theirs.isnan()), (
            f"{what}: NaN at {(ours.isnan() != theirs.isnan()).nonzero()[:5].tolist()}")
        keep = ~ours.isnan()
        assert torch.equal(ours[keep], theirs[keep]), (
            f"{what}: values differ at {(ours != theirs).logical_and(keep).nonzero()[:5].tolist()}")


def nan_cases(gen):
    """Where torchao's NaN bytes come from (docs/fp4.md, "Where a NaN's bytes go"): issue 43's
    block (1 x 32 zeros with x[1] = 1e-40 and x[17] = -3e-41: the per-tensor scale's reciprocal
    is Inf, a zero element gives 0 x Inf, x86's default NaN, which torch.clamp keeps), NaN
    elements (the full-reduction amax is 0xFFFFFFFF, a NaN block's amax 0x7FC00000), Inf elements
    and mixes of the two."""
    block = torch.zeros(1, 32)
    block[0, 1], block[0, 17] = 1e-40, -3e-41
    out = [("issue43_block", block)]
    tiny = torch.zeros(4, 64)
    tiny.view(-1)[torch.randint(0, 256, (9,), generator=gen)] = 1e-40
    out.append(("subnormal_and_zeros", tiny))
    for what in ("nan", "inf", "nan_and_inf"):
        x = torch.randn(16, 64, generator=gen)
        idx = torch.randint(0, x.numel(), (12,), generator=gen)
        x.view(-1)[idx[:6]] = float("nan") if what != "inf" else float("inf")
        x.view(-1)[idx[6:]] = float("-inf") if what != "nan" else float("nan")
        out.append((what, x))
    return out


def test_nvfp4_nan_bytes_are_torchaos(tmp_path, gen):
    for name, x in nan_cases(gen):
        for blocks in ("rowwise", "columnwise") if x.shape[0] % 16 == 0 else ("rowwise",):
            ours_codes, ours_scales, ours_glob = sim(tmp_path, "nvfp4", "torchao", blocks, x)
            ref = x.t().contiguous() if blocks == "columnwise" else x
            codes, scales, glob = torchao("nvfp4", "torchao", ref)
            assert torch.equal(ours_scales, scales), bytes_message(f"{name} {blocks} scales", x,
                                                                   ours_scales, scales)
            assert torch.equal(ours_codes, codes), bytes_message(f"{name} {blocks} codes", x,
                                                                 ours_codes, codes)
            assert torch.equal(ours_glob.view(torch.int32), glob.view(torch.int32)), (
                f"{name} global: ours {ours_glob.view(torch.int32).tolist()} "
                f"torchao {glob.view(torch.int32).tolist()}")


@pytest.mark.parametrize("fmt", list(MX_FORMATS))
@pytest.mark.parametrize("mode", list(MX_MODES))
def test_mx_nan_bytes_are_torchaos(tmp_path, gen, fmt, mode):
    for name, x in nan_cases(gen)[2:]:
        ours_codes, ours_scales, _ = sim(tmp_path, fmt, mode, "rowwise", x)
        codes, scales, _ = torchao(fmt, mode, x)
        assert torch.equal(ours_scales, scales), bytes_message(f"{name} scales", x, ours_scales,
                                                               scales)
        assert torch.equal(ours_codes, codes), bytes_message(f"{name} codes", x, ours_codes, codes)
