"""One training step of examples/hf_llama.py's LlamaForCausalLM (the "small" size: 2 layers,
d_model 64, context 64, batch 8, vocabulary 4096) three ways, measured in one process
(docs/performance.md, "The HF Llama example from Python"):

- fp32: the model as transformers builds it (torch's Linear, fp32 GEMMs);
- fp8lab: fp8lab.convert_model with torchao's tensorwise recipe (every Linear converted: sim's
  quantizers and GEMMs through torch.ops.fp8lab, on the CPU);
- torchao: torchao.float8.convert_to_float8_training with Float8LinearConfig(emulate=True), its
  tensorwise recipe (every Linear converted: torch ops, dequantize + mm).

A step is zero_grad, forward, backward and AdamW's step on the same batch sequence; the variants
are interleaved (step i of each, then step i + 1) so that a change of the machine's load falls on
all alike, after --warmup steps; the figures are each one's median wall-clock and thread CPU
time (the latter is what a loaded machine's time-sharing does not inflate). Torch runs on --threads threads
(1, as fp8lab's runs do). The machine and its load average are printed with the figures.

    .venv/bin/python bench/hf_llama_step.py [--steps 20] [--warmup 3] [--threads 1]
"""

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import fp8lab  # noqa: E402
import hf_llama  # noqa: E402


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def variants(seed: int) -> dict:
    from torchao.float8 import Float8LinearConfig, convert_to_float8_training

    plain = hf_llama.model_small(seed)
    ours = hf_llama.model_small(seed)
    fp8lab.convert_model(ours, "{scaling: tensorwise, module_filter: {skip_first_last_linear: false}}")
    theirs = hf_llama.model_small(seed)
    convert_to_float8_training(theirs, config=Float8LinearConfig(emulate=True))
    return {"fp32": plain, "fp8lab": ours, "torchao": theirs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    a = parser.parse_args()
    torch.set_num_threads(a.threads)
    models = variants(0)
    optimizers = {k: torch.optim.AdamW(m.parameters(), lr=1e-3) for k, m in models.items()}
    s = dict(hf_llama.SIZES["small"], steps=a.warmup + a.steps)
    hf_llama.SIZES["bench"] = s
    batches = hf_llama.make_batches(0, "bench")
    times = {k: [] for k in models}
    cpu = {k: [] for k in models}  # the thread's CPU time: what the time-sharing does not inflate
    load_before = os.getloadavg()
    for i, batch in enumerate(batches):
        for k, model in models.items():
            start, start_cpu = time.perf_counter(), time.thread_time()
            optimizers[k].zero_grad()
            model(**batch).loss.backward()
            optimizers[k].step()
            if i >= a.warmup:
                times[k].append(time.perf_counter() - start)
                cpu[k].append(time.thread_time() - start_cpu)
    load_after = os.getloadavg()
    median = {k: statistics.median(v) for k, v in times.items()}
    median_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    converted = sum(isinstance(m, fp8lab.Linear) for m in models["fp8lab"].modules())
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; "
          f"torch {torch.__version__} on {a.threads} thread(s); load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print(f"model: LlamaForCausalLM {sum(p.numel() for p in models['fp32'].parameters())} "
          f"parameters, {converted} Linears converted; batch {s['batch']} x {s['context']} tokens; "
          f"median of {a.steps} steps after {a.warmup}")
    for k in models:
        print(f"{k:8s} step {median[k] * 1e3:8.1f} ms wall (min {min(times[k]) * 1e3:.1f}, "
              f"max {max(times[k]) * 1e3:.1f}), {median_cpu[k] * 1e3:8.1f} ms CPU")
    for a_, b_ in (("fp8lab", "fp32"), ("fp8lab", "torchao"), ("torchao", "fp32")):
        print(f"{a_} / {b_}: {median[a_] / median[b_]:.2f} wall, "
              f"{median_cpu[a_] / median_cpu[b_]:.2f} CPU")


if __name__ == "__main__":
    main()
