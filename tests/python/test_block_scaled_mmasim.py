"""sim::block_scaled_gemm (the `blackwell_block` accumulation, sim/gemm/block_scaled.hpp) against
MMA-Sim 2.1.1 (`mmasim`, PyPI), bit for bit, on random and adversarial tiles.

Each tile is a 2 x 2 GEMM over K = 64 (two kind::mxf8f6f4 steps of 32) or K = 128 (two
kind::mxf4nvf4 steps of 64) plus an NVFP4 K = 48 tile zero-padded to 64, chained through an fp32
C. MMA-Sim runs one instruction's dot products (`dpa`, batched); the tiles go through the C++
model in sim_block_scaled_tiles (tests/sim/block_scaled_tiles.cpp). The tiles mix random codes
and scales with adversarial ones: all-zero rows, maximum magnitudes, exactly cancelling products,
subnormal elements and scales (E8M0 0x00, UE4M3 0x01-0x07), zero, NaN and Inf scales, NaN and Inf
elements where the format has them, and C zero, -0, subnormal, huge, Inf and NaN.

Measured (2026-12-04, the shared 2-core machine at load average ~17, mmasim 2.1.1, torch 2.15):
124 000 tiles (496 000 outputs: 10 configurations x 12 000 tiles, plus 4 000 padded K = 48 tiles),
0 mismatching bits; 15.6 min wall, 28.6 s CPU (`FP8LAB_TILES_PER_CONFIG` lowers the count). With
the RHT test below, the whole file: 0 mismatches, 16.2 min wall, 28.9 s CPU at load average ~19.
"""

import os
import pathlib
import subprocess
import tempfile
import zlib

import numpy as np
import pytest
import torch

mmasim = pytest.importorskip("mmasim", reason="mmasim (scripts/requirements.txt) is not installed")
from mmasim.nv_ptx import TCGen05MMABlockScale  # noqa: E402

_ROOT = pathlib.Path(__file__).resolve().parents[2]
_TILES = pathlib.Path(
    os.environ.get("FP8LAB_BLOCK_SCALED_TILES", _ROOT / "build/tests/sim/sim_block_scaled_tiles")
)
_TILES_PER_CONFIG = int(os.environ.get("FP8LAB_TILES_PER_CONFIG", 12_000))
_M = _N = 2

# (format_a, format_b, scale type, block, K, path): the kind::mxf8f6f4 pairs (one UE8M0 scale per
# 32), then kind::mxf4nvf4 with each scale kind it takes.
_CONFIGS = [
    ("e4m3", "e4m3", "ue8m0", 32, 64, "mxf8f6f4"),
    ("e5m2", "e5m2", "ue8m0", 32, 64, "mxf8f6f4"),
    ("e4m3", "e5m2", "ue8m0", 32, 64, "mxf8f6f4"),
    ("e2m1", "e2m1", "ue8m0", 32, 64, "mxf8f6f4"),
    ("e3m2", "e2m3", "ue8m0", 32, 64, "mxf8f6f4"),
    ("e2m3", "e4m3", "ue8m0", 32, 64, "mxf8f6f4"),
    ("e2m1", "e5m2", "ue8m0", 32, 64, "mxf8f6f4"),
    ("e2m1", "e2m1", "ue8m0", 32, 128, "mxf4nvf4"),
    ("e2m1", "e2m1", "ue8m0", 16, 128, "mxf4nvf4"),
    ("e2m1", "e2m1", "ue4m3", 16, 128, "mxf4nvf4"),
]
_BITS = {"e4m3": 8, "e5m2": 8, "e3m2": 6, "e2m3": 6, "e2m1": 4}
_SIGN = {"e4m3": 0x80, "e5m2": 0x80, "e3m2": 0x20, "e2m3": 0x20, "e2m1": 0x8}
_MAX = {"e4m3": 0x7E, "e5m2": 0x7B, "e3m2": 0x1F, "e2m3": 0x1F, "e2m1": 0x7}


def _codes(rng, fmt, shape, kind):
    """Element codes [T, rows, K] of one adversarial kind per tile row."""
    bits = _BITS[fmt]
    codes = rng.integers(0, 1 << bits, size=shape, dtype=np.uint8)
    # E4M3/E5M2 NaN/Inf codes appear at random (1 in 128 / 1 in 32 codes) in the random tiles;
    # keep them rarer so that most tiles are finite: replace 90% of them.
    if bits == 8:
        special = ((codes & 0x7F) == 0x7F) if fmt == "e4m3" else ((codes & 0x7C) == 0x7C)
        keep = rng.random(shape) < 0.1
        codes = np.where(special & ~keep, codes & 0x83, codes).astype(np.uint8)
    zero = kind == 1
    codes[zero] = 0
    top = kind == 2
    codes[top] = (_MAX[fmt] | (rng.integers(0, 2, size=shape) * _SIGN[fmt]))[top]
    small = kind == 3  # subnormal codes: exponent field 0
    mant = {"e4m3": 0x7, "e5m2": 0x3, "e3m2": 0x3, "e2m3": 0x7, "e2m1": 0x1}[fmt]
    codes[small] = (codes & (mant | _SIGN[fmt]))[small]
    return codes.astype(np.uint8)


def _scales(rng, scale_type, shape):
    if scale_type == "ue8m0":
        # Mostly near 2^0 so that products of different blocks overlap; the full range, 0x00
        # (2^-127, an fp32 subnormal), 0xFE and 0xFF (NaN) at random.
        near = (127 + rng.integers(-24, 25, size=shape)).astype(np.uint8)
        full = rng.integers(0, 256, size=shape, dtype=np.uint8)
        pick = rng.random(shape)
        s = np.where(pick < 0.75, near, full)
        s = np.where(pick > 0.995, 0xFF, s)
        s = np.where((pick > 0.985) & (pick <= 0.99), 0x00, s)
        s = np.where((pick > 0.99) & (pick <= 0.995), 0xFE, s)
        return s.astype(np.uint8)
    # UE4M3: every byte (sign bit set, zero, subnormal 0x01-0x07, NaN 0x7F / 0xFF), NaN rarer.
    s = rng.integers(0, 256, size=shape, dtype=np.uint8)
    nan = (s & 0x7F) == 0x7F
    s = np.where(nan & (rng.random(shape) < 0.9), s & 0xF0, s)
    return s.astype(np.uint8)


def _c(rng, shape):
    c = (rng.standard_normal(shape) * np.exp2(rng.integers(-40, 40, size=shape))).astype(np.float32)
    pick = rng.random(shape)
    specials = [
        (0.00, 0.20, 0.0),
        (0.20, 0.25, -0.0),
        (0.25, 0.28, np.float32(1e-40)),
        (0.28, 0.30, np.float32(-3e38)),
        (0.30, 0.31, np.inf),
        (0.31, 0.315, -np.inf),
        (0.315, 0.32, np.nan),
    ]
    for lo, hi, v in specials:
        c = np.where((pick >= lo) & (pick < hi), np.float32(v), c)
    return c.astype(np.float32)


def _tiles(seed, fa, fb, scale_type, block, k, count):
    rng = np.random.default_rng(seed)
    kind_a = rng.integers(0, 8, size=(count, _M, 1)) * np.ones((1, 1, k), dtype=np.int64)
    kind_b = rng.integers(0, 8, size=(count, _N, 1)) * np.ones((1, 1, k), dtype=np.int64)
    a = _codes(rng, fa, (count, _M, k), kind_a)
    b = _codes(rng, fb, (count, _N, k), kind_b)
    # Cancellation: in a quarter of the tiles, B's row 0 pairs equal values and A's row 0 pairs
    # values of opposite sign, so products cancel pairwise (and row 1 of B repeats row 0 of A).
    cancel = rng.random(count) < 0.25
    if fa == fb:
        a[cancel, 0, 1::2] = a[cancel, 0, 0::2] ^ _SIGN[fa]
        b[cancel, 0, 1::2] = b[cancel, 0, 0::2]
        b[cancel, 1, :] = a[cancel, 0, :]
    sa = _scales(rng, scale_type, (count, _M, k // block))
    sb = _scales(rng, scale_type, (count, _N, k // block))
    c = _c(rng, (count, _M, _N))
    return a, b, sa, sb, c


def _mmasim(fa, fb, scale_type, block, k, path, a, b, sa, sb, c):
    """MMA-Sim's D for every tile: its dpa over [T, M, N, K] vectors, one instruction per step."""
    av = torch.from_numpy(a)[:, :, None, :].expand(-1, -1, _N, -1)
    bv = torch.from_numpy(b)[:, None, :, :].expand(-1, _M, -1, -1)
    sav = torch.from_numpy(sa)[:, :, None, :].expand(-1, -1, _N, -1)
    sbv = torch.from_numpy(sb)[:, None, :, :].expand(-1, _M, -1, -1)
    acc = torch.from_numpy(c).clone()
    s_dtype = torch.float8_e8m0fnu if scale_type == "ue8m0" else torch.float8_e4m3fn
    sav = sav.contiguous().view(s_dtype)
    sbv = sbv.contiguous().view(s_dtype)

    def operand(x, fmt):
        x = x.contiguous()
        if fmt == "e4m3":
            return x.view(torch.float8_e4m3fn)
        if fmt == "e5m2":
            return x.view(torch.float8_e5m2)
        if fmt == "e2m1":
            return x << 2  # MMA-Sim holds an unpacked FP4 code in bits 5:2 of its byte
        return x  # FP6 in bits 5:0

    if path == "mxf8f6f4":
        op = TCGen05MMABlockScale("Blackwell", f"m128n8k32.kind::mxf8f6f4.block32.f32.{fa}.{fb}.ue8m0")
        a_op, b_op = operand(av, fa), operand(bv, fb)
        for step in range(k // 32):
            ks = slice(32 * step, 32 * step + 32)
            acc = op.dpa(a_op[..., ks], b_op[..., ks], acc, sav[..., step : step + 1],
                         sbv[..., step : step + 1])
        return acc
    name = f"m128n8k64.kind::mxf4nvf4.block{block}.f32.e2m1.e2m1.{scale_type}"
    op = TCGen05MMABlockScale("Blackwell", name)

    def pack(x):  # MMA-Sim unpacks a byte as (high nibble, low nibble)
        x = x.contiguous()
        return (x[..., 0::2] << 4) | x[..., 1::2]

    return op.dpa(pack(av), pack(bv), acc, sav, sbv)


def _sim(fa, fb, scale_type, block, k, path, a, b, sa, sb, c):
    count = a.shape[0]
    with tempfile.TemporaryDirectory() as tmp:
        path_in = pathlib.Path(tmp) / "tiles.bin"
        with open(path_in, "wb") as f:
            for arr in (a, b, sa, sb, c):
                f.write(np.ascontiguousarray(arr).tobytes())
        out = subprocess.run(
            [str(_TILES), str(path_in), fa, fb, scale_type, str(block), path, str(_M), str(_N),
             str(k), str(count)],
            check=True, capture_output=True,
        ).stdout
    return np.frombuffer(out, dtype=np.float32).reshape(count, _M, _N)


def _compare(config, a, b, sa, sb, c):
    expected = _mmasim(*config, a, b, sa, sb, c).numpy().view(np.uint32)
    got = _sim(*config, a, b, sa, sb, c).view(np.uint32)
    bad = np.argwhere(expected != got)
    if bad.size:
        t, i, j = bad[0]
        pytest.fail(
            f"{config}: {len(bad)} of {got.size} outputs differ; first tile {t} ({i}, {j}): "
            f"mmasim 0x{expected[t, i, j]:08X} ({expected.view(np.float32)[t, i, j]!r}), "
            f"sim 0x{got[t, i, j]:08X} ({got.view(np.float32)[t, i, j]!r}); "
            f"A codes {a[t, i].tolist()} scales {sa[t, i].tolist()}, "
            f"B codes {b[t, j].tolist()} scales {sb[t, j].tolist()}, C {c[t, i, j]!r}"
        )
    return got.size


@pytest.fixture(scope="module")
def tiles_binary():
    if not _TILES.exists():
        pytest.skip(f"{_TILES} is not built (cmake --build build --target sim_block_scaled_tiles)")
    return _TILES


@pytest.mark.parametrize("config", _CONFIGS, ids=lambda c: "-".join(map(str, c)))
def test_block_scaled_gemm_matches_mmasim(tiles_binary, config):
    seed = zlib.crc32(repr(config).encode())
    data = _tiles(seed, *config[:5], _TILES_PER_CONFIG)
    assert _compare(config, *data) == _TILES_PER_CONFIG * _M * _N


def test_nvfp4_partial_step_is_zero_padded(tiles_binary):
    """K = 48 (3 groups of 16): the model pads the step to 64 with zero elements, as a kernel
    zero-fills K; MMA-Sim gets the same zeros explicitly (scales 1.0: 0x38 in UE4M3)."""
    config = ("e2m1", "e2m1", "ue4m3", 16, 48, "mxf4nvf4")
    a, b, sa, sb, c = _tiles(48, *config[:5], 4000)
    got = _sim(*config, a, b, sa, sb, c).view(np.uint32)
    pad = lambda x, n, v: np.concatenate([x, np.full(x.shape[:2] + (n,), v, np.uint8)], axis=2)
    expected = _mmasim(*config[:4], 64, config[5], pad(a, 16, 0), pad(b, 16, 0), pad(sa, 1, 0x38),
                       pad(sb, 1, 0x38), c).numpy().view(np.uint32)
    assert np.array_equal(got, expected), f"{np.count_nonzero(got != expected)} outputs differ"


# --- The random Hadamard transform (sim/rht.hpp) against MMA-Sim's bf16 MMA -------------------
_RHT = pathlib.Path(os.environ.get("FP8LAB_RHT_CHUNKS", _ROOT / "build/tests/sim/sim_rht_chunks"))
_TE_SIGNS = [1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1]


def test_rht_matches_mmasim_bf16_mma():
    """y = bf16(MMA(x, diag(sign) H16 / 4)) for 50 000 chunks: MMA-Sim's Blackwell kind::f16
    (bf16 x bf16 -> f32, K = 16, C = +0), then torch's RN to bf16, against sim_rht_chunks.
    Chunks mix wide exponent ranges (bf16 subnormals included), zeros, repeated values that
    cancel in the transform, and NaN / Inf at random. Measured: 0 mismatching bits."""
    if not _RHT.exists():
        pytest.skip(f"{_RHT} is not built (cmake --build build --target sim_rht_chunks)")
    from mmasim.nv_ptx import TCGen05MMA

    count = 50_000
    rng = np.random.default_rng(16)
    x = rng.standard_normal((count, 16)) * np.exp2(rng.integers(-20, 20, size=(count, 1)))
    x *= np.exp2(rng.integers(-12, 12, size=(count, 16)) * (rng.random((count, 1)) < 0.5))
    x[rng.random((count, 16)) < 0.15] = 0.0
    tiny = rng.random(count) < 0.05
    x[tiny] *= 2.0**-120  # bf16 subnormals and underflow
    same = rng.random(count) < 0.2
    x[same, 1::2] = x[same, 0::2]  # pairs that cancel in half the outputs
    special = rng.random((count, 16)) < 0.0005
    x[special] = rng.choice([np.inf, -np.inf, np.nan], size=special.sum())
    xb = torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
    h = torch.tensor([[(-1.0) ** bin(r & c).count("1") for c in range(16)] for r in range(16)])
    m = (torch.diag(torch.tensor(_TE_SIGNS, dtype=torch.float32)) @ h * 0.25).to(torch.bfloat16)
    op = TCGen05MMA("Blackwell", "m64n8k16.kind::f16.f32.bf16.bf16")
    a = xb[:, None, :].expand(count, 16, 16)  # [chunk, j, i] = x_i
    b = m.T[None, :, :].expand(count, 16, 16)  # [chunk, j, i] = M[i][j]
    expected = op.dpa(a, b, torch.zeros(count, 16)).to(torch.bfloat16).float().numpy()

    with tempfile.TemporaryDirectory() as tmp:
        path_in = pathlib.Path(tmp) / "chunks.bin"
        path_in.write_bytes(xb.float().numpy().tobytes())
        out = subprocess.run([str(_RHT), str(path_in), str(count)], check=True,
                             capture_output=True).stdout
    got = np.frombuffer(out, dtype=np.float32).reshape(count, 16)
    both_nan = np.isnan(expected) & np.isnan(got)
    bad = np.argwhere((expected.view(np.uint32) != got.view(np.uint32)) & ~both_nan)
    if bad.size:
        c, j = bad[0]
        pytest.fail(f"{len(bad)} outputs differ; first chunk {c} output {j}: mmasim "
                    f"{expected[c, j]!r}, sim {got[c, j]!r}; x = {xb[c].float().tolist()}")
