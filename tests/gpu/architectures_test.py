#!/usr/bin/env python3
"""gpu_architectures_test: every object of libfp8lab_gpu.a that carries device code carries exactly
the architectures the build chose (CMAKE_CUDA_ARCHITECTURES: "90a-real" -> an sm_90a cubin,
"80-virtual" -> compute_80 PTX). LibTorch's CMake once reset the choice and every object held
nvcc's default sm_75 instead, with no error anywhere (cmake/fp8lab_dependencies.cmake).

Usage: architectures_test.py LIBRARY "90a-real;80-virtual". Exit 77 (skipped) without cuobjdump."""
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_cuobjdump():
    for candidate in [shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump",
                      *glob.glob(os.path.join(ROOT, ".venv/lib/python3*/site-packages/triton/"
                                                  "backends/nvidia/bin/cuobjdump"))]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def expected(architectures):
    """({"sm_90a"}, {"sm_80"}) from "90a-real;80-virtual" (a bare "90a" is both)."""
    cubins, ptx = set(), set()
    for entry in filter(None, architectures.split(";")):
        arch, _, kind = entry.partition("-")
        if kind not in ("", "real", "virtual"):
            sys.exit(f"gpu_architectures_test: cannot read architecture {entry!r}")
        if kind in ("", "real"):
            cubins.add(f"sm_{arch}")
        if kind in ("", "virtual"):
            ptx.add(f"sm_{arch}")
    return cubins, ptx


def listing(cuobjdump, flag, library):
    """{member: set of architectures} from `cuobjdump --list-elf` / `--list-ptx`."""
    out = subprocess.run([cuobjdump, flag, library], capture_output=True, text=True, check=True)
    members, current = {}, None
    for line in out.stdout.splitlines():
        if line.startswith("member "):
            current = line.rsplit(":", 2)[-2]
            members.setdefault(current, set())
        found = re.search(r"\.(sm_\d+a?)\.(?:cubin|ptx)$", line.strip())
        if found and current is not None:
            members[current].add(found.group(1))
    return members


def main():
    library, architectures = sys.argv[1], sys.argv[2]
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        print("SKIPPED: no cuobjdump (CUDA toolkit, or triton in .venv) to read the objects")
        return 77
    want_cubins, want_ptx = expected(architectures)
    cubins = listing(cuobjdump, "--list-elf", library)
    ptx = listing(cuobjdump, "--list-ptx", library)
    with_code = sorted(m for m in set(cubins) | set(ptx) if cubins.get(m) or ptx.get(m))
    failures = [f"{m}: cubins {sorted(cubins.get(m, set()))}, PTX {sorted(ptx.get(m, set()))}"
                for m in with_code
                if cubins.get(m, set()) != want_cubins or ptx.get(m, set()) != want_ptx]
    print(f"{library}: {len(with_code)} objects with device code; want cubins "
          f"{sorted(want_cubins)}, PTX {sorted(want_ptx)} (CMAKE_CUDA_ARCHITECTURES {architectures})")
    if not with_code:
        print("FAILED: no object carries device code")
        return 1
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
