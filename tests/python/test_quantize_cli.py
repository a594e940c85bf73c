"""`fp8lab quantize` against the real torchao 0.18 (docs/fp4.md, "One tensor from the command
line"): numpy reads codes.npy, scales.npy and global.npy (np.load, no pickle) with the documented
dtypes and shapes, and their bytes equal torchao's (0 differing bytes) for NVFP4 torchao mode and
MXFP4/MXFP6 in every torchao 0.18 rounding, rows and columns, on the finite inputs of
test_fp4_scaling_torchao.py; a bf16 stack (ml_dtypes' .npy) in one call equals torchao on each
tensor, and the single-level mode (torchao-1level, run through fp8lab-quantize) equals
nvfp4_quantize without a per-tensor scale. ctest sets FP8LAB_EXECUTABLE and
FP8LAB_QUANTIZE_EXECUTABLE: experiments_quantize_torchao_test."""

import os
import subprocess

import numpy as np
import pytest
import torch

from test_fp4_scaling_torchao import MX_FORMATS, MX_MODES, bytes_message, random_inputs, torchao

EXE = os.environ.get("FP8LAB_EXECUTABLE")
pytestmark = pytest.mark.skipif(
    not EXE, reason="FP8LAB_EXECUTABLE (the fp8lab program) is not set; "
    "ctest -R experiments_quantize_torchao_test sets it")

SHAPE = (128, 256)


def quantize(tmp_path, fmt, mode, axis, x):
    """Runs fp8lab quantize on x and returns (codes, scales, global) as numpy read them."""
    src, out = tmp_path / "x.npy", tmp_path / f"out-{fmt}-{mode}-{axis}"
    np.save(src, x.numpy())
    args = [EXE, "quantize", "--format", fmt, "--axis", axis, "--in", str(src), "--out", str(out)]
    args += ["--mode", "torchao"] if fmt == "nvfp4" else ["--mode", "torchao-0.18", "--rounding",
                                                            mode]
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, f"{' '.join(args)}: exit {run.returncode}: {run.stderr}"
    codes, scales = np.load(out / "codes.npy"), np.load(out / "scales.npy")
    rows, cols = x.shape if axis == "rows" else x.shape[::-1]
    per_byte = 2 if fmt in ("nvfp4", "mxfp4") else 1
    block = 16 if fmt == "nvfp4" else 32
    assert codes.dtype == np.uint8 and codes.shape == (rows, cols // per_byte), codes.shape
    assert scales.dtype == np.uint8 and scales.shape == (rows, cols // block), scales.shape
    glob = None
    if fmt == "nvfp4":
        glob = np.load(out / "global.npy")
        assert glob.dtype == np.float32 and glob.shape == (3,), (glob.dtype, glob.shape)
        glob = torch.from_numpy(glob)
    else:
        assert not (out / "global.npy").exists()
    return torch.from_numpy(codes).flatten(), torch.from_numpy(scales).flatten(), glob


def check_equal(name, ours, theirs):
    ours_codes, ours_scales, ours_glob = ours
    codes, scales, glob = theirs
    assert torch.equal(ours_scales, scales), bytes_message(f"{name} scales", None, ours_scales,
                                                           scales)
    assert torch.equal(ours_codes, codes), bytes_message(f"{name} codes", None, ours_codes, codes)
    if glob is not None:
        assert torch.equal(ours_glob.view(torch.int32), glob.view(torch.int32)), (
            f"{name} global: ours {ours_glob.tolist()} torchao {glob.tolist()}")


@pytest.mark.parametrize("axis", ["rows", "columns"])
def test_nvfp4_torchao_mode_gives_torchaos_bytes(tmp_path, gen, axis):
    # One run per input: NVFP4's per-tensor scale sees the whole tensor.
    for name, x in random_inputs(gen, *SHAPE):
        ref = x.t().contiguous() if axis == "columns" else x
        check_equal(name, quantize(tmp_path, "nvfp4", "torchao", axis, x),
                    torchao("nvfp4", "torchao", ref))


@pytest.mark.parametrize("fmt,mode", [(f, m) for f in MX_FORMATS for m in MX_MODES])
@pytest.mark.parametrize("axis", ["rows", "columns"])
def test_mx_torchao_modes_give_torchaos_bytes(tmp_path, gen, fmt, mode, axis):
    # MX scales are per block, so the inputs run stacked as one tensor.
    x = torch.cat([x for _, x in random_inputs(gen, *SHAPE)])
    ref = x.t().contiguous() if axis == "columns" else x
    check_equal(f"{fmt} {mode} {axis}", quantize(tmp_path, fmt, mode, axis, x),
                torchao(fmt, mode, ref))


DUMP = os.environ.get("FP8LAB_SIM_FP4_QUANTIZE")


@pytest.mark.skipif(not DUMP, reason="FP8LAB_SIM_FP4_QUANTIZE (sim_fp4_quantize) is not set")
@pytest.mark.parametrize("fmt,axis,blocks", [("nvfp4", "rows", "rowwise"),
                                             ("nvfp4", "columns", "columnwise"),
                                             ("nvfp4", "2d", "2d"), ("mxfp4", "rows", "rowwise"),
                                             ("mxfp6_e3m2", "columns", "columnwise")])
def test_te_modes_equal_the_plan_built_by_hand(tmp_path, gen, fmt, axis, blocks):
    """TE mode has no torchao to compare with: the command's files (plan from the lowering) equal
    sim_fp4_quantize's (tests/sim/fp4_quantize_dump.cpp, whose plan names its blocks by hand)."""
    _, x = random_inputs(gen, *SHAPE)[2]  # the adversarial tensor
    src, out = tmp_path / "x.npy", tmp_path / "out"
    np.save(src, x.numpy())
    args = [EXE, "quantize", "--format", fmt, "--mode", "te", "--in", str(src), "--out", str(out)]
    args += ["--2d"] if axis == "2d" else ["--axis", axis]
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, f"{' '.join(args)}: exit {run.returncode}: {run.stderr}"
    (tmp_path / "x.bin").write_bytes(x.numpy().tobytes())
    subprocess.run([DUMP, fmt, "te", blocks, str(SHAPE[0]), str(SHAPE[1]), str(tmp_path / "x.bin"),
                    str(tmp_path / "dump")], check=True)
    for name, suffix in (("codes", "codes"), ("scales", "scales")):
        ours = np.load(out / f"{name}.npy").tobytes()
        theirs = (tmp_path / f"dump.{suffix}").read_bytes()
        assert ours == theirs, f"{fmt} {axis} {name}: {sum(a != b for a, b in zip(ours, theirs))} " \
                               f"of {len(theirs)} bytes differ"
    if fmt == "nvfp4":
        assert np.load(out / "global.npy").tobytes() == (tmp_path / "dump.global").read_bytes()


QUANTIZE = os.environ.get("FP8LAB_QUANTIZE_EXECUTABLE")


def run_quantize(args):
    run = subprocess.run(args, capture_output=True, text=True)
    assert run.returncode == 0, f"{' '.join(args)}: exit {run.returncode}: {run.stderr}"


def test_bf16_npy_and_a_stack_give_torchaos_bytes_per_tensor(tmp_path, gen):
    """A 3-D bfloat16 .npy as ml_dtypes saves it ('<V2'): one call, each tensor its own
    per-tensor scale, equal to torchao's nvfp4_quantize on each bf16 tensor alone."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    xs = [x.bfloat16() for _, x in random_inputs(gen, *SHAPE)]
    src, out = tmp_path / "stack.npy", tmp_path / "out"
    np.save(src, torch.stack(xs).float().numpy().astype(ml_dtypes.bfloat16))
    assert open(src, "rb").read(64).find(b"'<V2'") > 0  # what the reader accepts as bf16
    run_quantize([EXE, "quantize", "--format", "nvfp4", "--mode", "torchao", "--in", str(src),
                  "--out", str(out)])
    codes, scales = np.load(out / "codes.npy"), np.load(out / "scales.npy")
    glob = np.load(out / "global.npy")
    assert codes.shape == (len(xs), SHAPE[0], SHAPE[1] // 2) and glob.shape == (len(xs), 3)
    assert scales.shape == (len(xs), SHAPE[0], SHAPE[1] // 16)
    for t, x in enumerate(xs):
        check_equal(f"tensor {t}", (torch.from_numpy(codes[t]).flatten(),
                                    torch.from_numpy(scales[t]).flatten(),
                                    torch.from_numpy(glob[t])), torchao("nvfp4", "torchao", x))


@pytest.mark.skipif(not QUANTIZE, reason="FP8LAB_QUANTIZE_EXECUTABLE (fp8lab-quantize) is not set")
@pytest.mark.parametrize("axis", ["rows", "columns"])
def test_single_level_nvfp4_gives_torchaos_bytes(tmp_path, gen, axis):
    """--mode torchao-1level (through fp8lab-quantize, which has no LibTorch) against torchao
    0.18's nvfp4_quantize(x, 16, per_tensor_scale=None): codes and scales, no global.npy."""
    from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize
    inputs = random_inputs(gen, *SHAPE)
    src, out = tmp_path / "stack.npy", tmp_path / "out"
    np.save(src, torch.stack([x for _, x in inputs]).numpy())
    run_quantize([QUANTIZE, "--format", "nvfp4", "--mode", "torchao-1level", "--axis", axis,
                  "--in", str(src), "--out", str(out)])
    assert not (out / "global.npy").exists()
    codes, scales = np.load(out / "codes.npy"), np.load(out / "scales.npy")
    for t, (name, x) in enumerate(inputs):
        ref = x.t().contiguous() if axis == "columns" else x
        their_scales, their_codes = nvfp4_quantize(ref, 16, None)
        check_equal(name, (torch.from_numpy(codes[t]).flatten(),
                           torch.from_numpy(scales[t]).flatten(), None),
                    (their_codes.view(torch.uint8).flatten(),
                     their_scales.view(torch.uint8).flatten(), None))
