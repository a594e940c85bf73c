"""A HuggingFace transformers LlamaForCausalLM under fp8lab's recipes: a user's copyable example.

The model is built from a small LlamaConfig (random init, nothing downloaded) and trained on the
project's KJV tokens (docs/workloads.md, "The text corpus and tokenizer": scripts/text-corpus's
.deps/text/kjv-bpe4096, or $FP8LAB_TEXT_DIR), the same split the C++ llama workloads read. The
sweep is the baseline plus three recipes (TE's current scaling, MXFP8, torchao's rowwise) over
two seeds, run by fp8lab.sweep; the results directory holds the run records, per-layer Parquet
sidecars, summary.csv with the paired verdicts, and report.html.

    .venv/bin/python examples/hf_llama.py runs/hf-llama            # the "small" size
    .venv/bin/python examples/hf_llama.py runs/hf-llama-ci --size ci

fp8lab.sweep trains each run in its own process, which imports model_fn, data_fn and eval_fn by
name: hence one top-level function of each per size below, not a closure.
"""

import argparse
import os
import sys
from pathlib import Path

import torch

import fp8lab

ROOT = Path(__file__).resolve().parents[1]

# Sizes: "ci" for tests/python/test_hf_llama_example.py, "small" for a first real look. The
# vocabulary is the corpus's (4096); every Linear's dimensions divide by 16 (the FP8 filter).
SIZES = {
    "ci": dict(hidden=32, intermediate=64, layers=1, heads=2, context=16, batch=4, steps=4,
               eval_windows=8),
    "small": dict(hidden=64, intermediate=176, layers=2, heads=4, context=64, batch=8, steps=60,
                  eval_windows=32),
}

SWEEP = {
    "method": "grid",
    "parameters": {"scaling": {"values": ["current", "mxfp8", "rowwise"]}},
    "seeds": [0, 1],
    "layer_stats_every": 1,
}


def corpus_directory() -> Path:
    return Path(os.environ.get("FP8LAB_TEXT_DIR", ROOT / ".deps/text/kjv-bpe4096"))


def token_ids(split: str) -> torch.Tensor:
    """train.ids or eval.ids: whitespace-separated token ids, as bpe_corpus.cpp reads them."""
    path = corpus_directory() / f"{split}.ids"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no KJV token ids; scripts/setup (scripts/text-corpus) "
                                "writes them, or set FP8LAB_TEXT_DIR")
    return torch.tensor([int(t) for t in path.read_text().split()], dtype=torch.int64)


def make_model(seed: int, size: str) -> torch.nn.Module:
    from transformers import LlamaConfig, LlamaForCausalLM

    s = SIZES[size]
    config = LlamaConfig(vocab_size=4096, hidden_size=s["hidden"],
                         intermediate_size=s["intermediate"], num_hidden_layers=s["layers"],
                         num_attention_heads=s["heads"], num_key_value_heads=s["heads"],
                         max_position_embeddings=s["context"], tie_word_embeddings=False,
                         attn_implementation="eager")
    with torch.random.fork_rng():  # a pure function of the seed; the global generator is kept
        torch.manual_seed(seed)
        return LlamaForCausalLM(config).float()


def make_batches(seed: int, size: str) -> list:
    """Training batches: `batch` random windows of the train split per step, drawn from a
    generator seeded by the seed; labels = input_ids (the model shifts them)."""
    s = SIZES[size]
    ids = token_ids("train")
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(s["steps"]):
        starts = torch.randint(0, len(ids) - s["context"], (s["batch"],), generator=g)
        x = torch.stack([ids[i:i + s["context"]] for i in starts.tolist()])
        batches.append({"input_ids": x, "labels": x})
    return batches


def make_eval(size: str) -> list:
    """The fixed eval set: `eval_windows` evenly spaced windows of the eval split, `batch` a batch."""
    s = SIZES[size]
    ids = token_ids("eval")
    starts = torch.linspace(0, len(ids) - s["context"] - 1, s["eval_windows"]).long()
    windows = torch.stack([ids[i:i + s["context"]] for i in starts.tolist()])
    return [{"input_ids": w, "labels": w} for w in windows.split(s["batch"])]


def model_ci(seed):
    return make_model(seed, "ci")


def data_ci(seed):
    return make_batches(seed, "ci")


def eval_ci():
    return make_eval("ci")


def model_small(seed):
    return make_model(seed, "small")


def data_small(seed):
    return make_batches(seed, "small")


def eval_small():
    return make_eval("small")


def run(out, size: str = "small", jobs=None) -> Path:
    """The sweep of this example into `out`; returns its report.html."""
    functions = {"ci": (model_ci, data_ci, eval_ci), "small": (model_small, data_small, eval_small)}
    model_fn, data_fn, eval_fn = functions[size]
    steps = SIZES[size]["steps"]
    return fp8lab.sweep(SWEEP, model_fn, data_fn, out, jobs=jobs, steps=steps, eval_fn=eval_fn,
                        eval_every=max(1, steps // 4))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--jobs", type=int)
    a = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the runs import hf_llama
    import hf_llama  # noqa: E402  by its module name, not __main__

    print(hf_llama.run(a.out, a.size, a.jobs))
