"""The installed package: its version, and python -m fp8lab."""

import os
import pathlib
import re
import subprocess
import sys

import fp8lab

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_version_is_the_cmake_project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    project = re.search(r"project\(fp8lab VERSION ([0-9.]+)", text).group(1)
    assert fp8lab.__version__ == project


def test_python_m_fp8lab_without_the_command_says_how_to_get_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "FP8LAB_CLI"}
    env["PATH"] = str(tmp_path)  # no fp8lab on it
    run = subprocess.run(
        [sys.executable, "-m", "fp8lab", "--version"], env=env, capture_output=True, text=True
    )
    assert run.returncode == 2, run
    assert "FP8LAB_CLI" in run.stderr and "scripts/build" in run.stderr, run.stderr


def test_python_m_fp8lab_runs_the_command(tmp_path):
    # A stand-in command: what python -m fp8lab passes it and what it returns come back.
    command = tmp_path / "fp8lab"
    command.write_text('#!/bin/sh\necho "args: $*"\nexit 3\n')
    command.chmod(0o755)
    env = dict(os.environ, FP8LAB_CLI=str(command))
    run = subprocess.run(
        [sys.executable, "-m", "fp8lab", "explain", "--env"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 3, run
    assert run.stdout == "args: explain --env\n"


def test_python_m_fp8lab_is_the_built_command():
    # scripts/test points FP8LAB_CLI at the command it built.
    command = os.environ.get("FP8LAB_CLI")
    if not command:
        import pytest

        pytest.skip("FP8LAB_CLI is not set (scripts/test sets it to build/experiments/fp8lab)")
    run = subprocess.run(
        [sys.executable, "-m", "fp8lab", "--version"], capture_output=True, text=True
    )
    assert run.returncode == 0, run
    assert run.stdout.startswith(f"fp8lab {fp8lab.__version__}"), run.stdout
