"""fp8lab.layer_stats: the per-layer statistics sidecars of a results directory as one pandas
DataFrame, read by fp8lab.results (notebooks/fp8lab_results.py, shipped in the package), the
reader the notebooks use: one reader, which checks every column it reads."""

from pathlib import Path


def layer_stats(directory) -> "pandas.DataFrame":  # noqa: F821  pandas is imported when called
    """Every run's ``layer_stats/<run_id>.parquet`` in ``directory`` (the output of `fp8lab sweep`
    or `fp8lab run` and `fp8lab report`: it reads ``results.jsonl``), concatenated in record
    order: one row per step, Linear, tensor, GEMM copy and recipe (docs/results-schema.md, "Layer
    statistics sidecar"), with ``run_id`` and ``label`` first. ValueError naming the file and the
    field when a file is missing or lacks what is read, or when no run kept a sidecar."""
    import pandas as pd

    from fp8lab import results

    try:
        records = results.load_records(results.results_directory(directory))
        frames = [results.load_layer_stats(directory, r) for r in records
                  if results.layer_stats_path(directory, r) is not None]
    except (results.ResultsSchemaError, OSError) as e:
        raise ValueError(f"fp8lab.layer_stats: {e}") from None
    if not frames:
        raise ValueError(
            f"fp8lab.layer_stats: no run in {Path(directory) / 'results.jsonl'} kept a layer "
            "statistics sidecar; accepted: a directory of runs with layer_stats_every or what_if "
            "set (docs/results-schema.md)")
    return pd.concat(frames, ignore_index=True)
