#!/usr/bin/env python3
"""Exhaustive oracle for sim's fp32/bf16 -> E2M1, E2M3, E3M2 casts (sim/cast.hpp).

  cast_subbyte_ml_dtypes_oracle.py SIM_SUBBYTE_CODES

1. ml_dtypes (scripts/requirements.txt pins the version): float4_e2m1fn, float6_e2m3fn and
   float6_e3m2fn against sim's "ml_dtypes" mode on every fp32 bit pattern (2^32) and every bf16 one
   (2^16, ml_dtypes' own bfloat16 -> sub-byte cast), NaN and Inf inputs included: 0 differing codes.
2. torchao 0.18's _f32_to_floatx_unpacked against sim's "torchao" mode on every fp32 NaN pattern
   (2^24: its NaN codes depend on the payload) and on every 251st fp32 pattern (about 17 M; all
   2^32 through torchao's ten tensor ops would take over ten minutes per format).
3. torch's float4_e2m1fn_x2: torch 2.15 defines no CPU conversion to or from it (storage only,
   the bytes sim/pack.hpp writes); checked so that a torch that gains one makes this test ask to
   be extended.
SIM_SUBBYTE_CODES is tests/sim/subbyte_codes.cpp, which streams sim's codes. Each mismatch prints
the input bits, its value and both codes. Exit 0 all equal, 1 mismatches, 2 bad usage or a missing
package.
"""
import subprocess
import sys

import numpy as np

CHUNK = 1 << 24
SHOWN = 8
FORMATS = ("e2m1", "e2m3", "e3m2")


def fail_usage(message):
    print(f"cast_subbyte_ml_dtypes_oracle.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_exactly(stream, count):
    data = bytearray(count)
    view = memoryview(data)
    got = 0
    while got < count:
        n = stream.readinto(view[got:])
        if not n:
            raise RuntimeError(f"sim_subbyte_codes ended after {got} of {count} bytes")
        got += n
    return np.frombuffer(data, dtype=np.uint8)


class Mismatches:
    def __init__(self, label):
        self.label = label
        self.count = 0
        self.shown = []

    def add(self, bits, values, oracle, sim, width):
        where = np.nonzero(oracle != sim)[0]
        self.count += len(where)
        for i in where[: max(0, SHOWN - len(self.shown))]:
            self.shown.append(
                f"x = 0x{int(bits[i]):0{width}X} ({float(values[i])!r}): "
                f"oracle 0x{int(oracle[i]):02X}, sim 0x{int(sim[i]):02X}")

    def report(self):
        print(f"{self.label}: {self.count} mismatches")
        for line in self.shown:
            print(f"  {line}")
        return self.count == 0


def sim_stream(driver, fmt, mode, source, begin=None, end=None, stride=None):
    args = [driver, fmt, mode, source]
    if begin is not None:
        args += [str(begin), str(end), str(stride)]
    return subprocess.Popen(args, stdout=subprocess.PIPE)


def finish(process):
    rest = process.stdout.read()
    if process.wait() != 0 or rest:
        raise RuntimeError(f"sim_subbyte_codes exited {process.returncode} "
                           f"with {len(rest)} bytes left unread")


def check_ml_dtypes(driver, ml_dtypes):
    dtypes = {"e2m1": ml_dtypes.float4_e2m1fn, "e2m3": ml_dtypes.float6_e2m3fn,
              "e3m2": ml_dtypes.float6_e3m2fn}
    ok = True
    for fmt in FORMATS:
        log = Mismatches(f"ml_dtypes {ml_dtypes.__version__} {dtypes[fmt].__name__}, all 2^32 fp32")
        sim = sim_stream(driver, fmt, "ml_dtypes", "fp32")
        for start in range(0, 1 << 32, CHUNK):
            bits = np.arange(start, start + CHUNK, dtype=np.uint32)
            values = bits.view(np.float32)
            with np.errstate(invalid="ignore", over="ignore"):
                oracle = values.astype(dtypes[fmt]).view(np.uint8)
            log.add(bits, values, oracle, read_exactly(sim.stdout, CHUNK), 8)
        finish(sim)
        ok &= log.report()

        log = Mismatches(f"ml_dtypes {ml_dtypes.__version__} {dtypes[fmt].__name__}, all 2^16 bf16")
        sim = sim_stream(driver, fmt, "ml_dtypes", "bf16")
        bits = np.arange(1 << 16, dtype=np.uint16)
        values = bits.view(ml_dtypes.bfloat16)
        with np.errstate(invalid="ignore", over="ignore"):
            oracle = values.astype(dtypes[fmt]).view(np.uint8)
        log.add(bits, values, oracle, read_exactly(sim.stdout, 1 << 16), 4)
        finish(sim)
        ok &= log.report()
    return ok


def check_torchao(driver, torch):
    from torchao.prototype.custom_fp_utils import _f32_to_floatx_unpacked
    import torchao
    torch.set_num_threads(1)
    bits_of = {"e2m1": (2, 1), "e2m3": (2, 3), "e3m2": (3, 2)}
    # The positive and the negative NaNs, then a stride over every pattern (finite, Inf, NaN).
    ranges = [(0x7F80_0001, 0x8000_0000, 1), (0xFF80_0001, 1 << 32, 1), (0, 1 << 32, 251)]
    ok = True
    for fmt in FORMATS:
        for begin, end, stride in ranges:
            label = (f"torchao {torchao.__version__} _f32_to_floatx_unpacked {fmt}, fp32 "
                     f"0x{begin:08X}..0x{end - 1:08X} step {stride}")
            log = Mismatches(label)
            sim = sim_stream(driver, fmt, "torchao", "fp32", begin, end, stride)
            for start in range(begin, end, CHUNK * stride):
                bits = np.arange(start, min(end, start + CHUNK * stride), stride, dtype=np.uint64)
                bits = bits.astype(np.uint32)
                values = bits.view(np.float32)
                oracle = _f32_to_floatx_unpacked(torch.from_numpy(values.copy()), *bits_of[fmt])
                log.add(bits, values, oracle.numpy(), read_exactly(sim.stdout, len(bits)), 8)
            finish(sim)
            ok &= log.report()
    return ok


def check_torch_float4(torch):
    x = torch.tensor([1.0, 2.0])
    try:
        x.to(torch.float4_e2m1fn_x2)
    except (NotImplementedError, RuntimeError) as error:
        print(f"torch {torch.__version__}: no CPU conversion to float4_e2m1fn_x2 "
              f"({str(error).splitlines()[0]}); it is storage for packed bytes only")
        return True
    print(f"torch {torch.__version__} converts to float4_e2m1fn_x2 on CPU: add it as an oracle here")
    return False


def main():
    if len(sys.argv) != 2:
        fail_usage("expected one argument, the path of sim_subbyte_codes")
    driver = sys.argv[1]
    try:
        import ml_dtypes
        import torch
        import torchao  # noqa: F401
    except ImportError as error:
        fail_usage(f"{error}: install scripts/requirements.txt into this Python ({sys.executable})")
    ok = check_ml_dtypes(driver, ml_dtypes)
    ok &= check_torchao(driver, torch)
    ok &= check_torch_float4(torch)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
