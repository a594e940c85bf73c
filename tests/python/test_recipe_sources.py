"""Recipe.ao, Recipe.from_env, accelerate configs in Recipe.from_file, keep_high_precision and
fp8lab.autocast: recipes read by recipes/' readers, with the CLI's messages."""

import os
import pathlib
import re
import subprocess

import pytest
import torch

import fp8lab

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ---- Recipe.ao -------------------------------------------------------------------------------

def test_recipe_ao_defaults_are_accelerates():
    # AORecipeKwargs() with config None: Float8LinearConfig(pad_inner_dim=True,
    # enable_fsdp_float8_all_gather=True), torchao's tensorwise recipe, and accelerate's filter.
    r = fp8lab.Recipe.ao()
    assert r.scaling == "tensorwise"
    assert r == fp8lab.Recipe("{scaling: tensorwise, pad_inner_dim: true, "
                              "enable_fsdp_float8_all_gather: true}")
    assert "pad_inner_dim: true" in r.describe()
    assert r._info["module_filter"]["skip_first_last_linear"]
    off = fp8lab.Recipe.ao(pad_inner_dim=False, enable_fsdp_float8_all_gather=None)
    assert "pad_inner_dim: false" in off.describe()
    assert "enable_fsdp_float8_all_gather: true" in off.describe()


def test_recipe_ao_reads_torchaos_named_configs():
    from torchao.float8 import Float8LinearConfig

    for name in ("tensorwise", "rowwise", "rowwise_with_gw_hp"):
        config = Float8LinearConfig.from_recipe_name(name)
        assert fp8lab.Recipe.ao(config=config).scaling == name
        assert fp8lab.Recipe.ao(config=name) == fp8lab.Recipe.ao(config=config)
    emulated = Float8LinearConfig.from_recipe_name("rowwise")
    emulated = Float8LinearConfig(**{**emulated.__dict__, "emulate": True})
    assert fp8lab.Recipe.ao(config=emulated).scaling == "rowwise"
    # The config's own flags win over the kwargs, as in accelerate.
    r = fp8lab.Recipe.ao(config=Float8LinearConfig(), pad_inner_dim=True)
    assert "pad_inner_dim: false" in r.describe()
    with pytest.raises(ValueError, match=r"none of torchao's named recipes; accepted: "
                                         r"Float8LinearConfig.from_recipe_name"):
        fp8lab.Recipe.ao(config=Float8LinearConfig(round_scales_to_power_of_2=True))
    with pytest.raises(ValueError, match=r"config 'rowwize' is not a torchao recipe name; "
                                         r"accepted: tensorwise, rowwise, rowwise_with_gw_hp"):
        fp8lab.Recipe.ao(config="rowwize")
    with pytest.raises(TypeError, match=r"config is a dict; accepted: None, a torchao recipe"):
        fp8lab.Recipe.ao(config={})
    with pytest.raises(TypeError, match=r"Recipe.ao\(\) got unexpected keyword arguments "
                                        r"\['margin'\]; accepted: config, module_filter_func"):
        fp8lab.Recipe.ao(margin=1)


def test_recipe_ao_module_filter_func_replaces_accelerates_filter():
    def model():
        return torch.nn.Sequential(*(torch.nn.Linear(16, 16) for _ in range(3)),
                                   torch.nn.Linear(16, 10))

    # accelerate's default: not the first and last Linear, and dims % 16.
    assert fp8lab.convert_model(model(), fp8lab.Recipe.ao()) == ["1", "2"]
    # A module_filter_func is the only filter (convert_model_to_fp8_ao passes it to torchao).
    keep = fp8lab.Recipe.ao(module_filter_func=lambda module, fqn: fqn != "1")
    assert fp8lab.convert_model(model(), keep) == ["0", "2", "3"]
    # An explicit module_filter argument wins over the recipe's.
    assert fp8lab.convert_model(model(), keep, lambda module, fqn: fqn == "1") == ["1"]
    with pytest.raises(TypeError, match=r"module_filter_func is a int; accepted: None or a "
                                        r"callable"):
        fp8lab.Recipe.ao(module_filter_func=3)


# ---- Recipe.from_env and accelerate configs --------------------------------------------------

def test_recipe_from_env_reads_accelerates_variables():
    env = {"ACCELERATE_FP8_FORMAT": "e4m3", "ACCELERATE_FP8_AMAX_HISTORY_LEN": "16",
           "ACCELERATE_FP8_OVERRIDE_WGRAD": "yes", "PATH": "/bin"}
    r = fp8lab.Recipe.from_env(env)
    assert r == fp8lab.Recipe.te(fp8_format="E4M3", amax_history_len=16,
                                 override_linear_precision=(False, False, True))
    # accelerate's most_recent reaches TE as its default, max (te-accelerate.md §1.2).
    up = fp8lab.Recipe.from_env(env, runs_as="upstream")
    assert "amax_compute_algo: max" in up.describe()
    assert fp8lab.Recipe.from_env({"ACCELERATE_FP8_BACKEND": "AO"}) == fp8lab.Recipe.ao()
    mx = fp8lab.Recipe.from_env({"ACCELERATE_FP8_USE_MXFP8_BLOCK_SCALING": "1"})
    assert mx.scaling == "mxfp8"


def test_recipe_from_env_errors_are_the_readers():
    with pytest.raises(ValueError, match=r"no variable is set.*accepted: .*ACCELERATE_FP8_FORMAT"):
        fp8lab.Recipe.from_env({"PATH": "/bin"})
    with pytest.raises(ValueError, match=r"ACCELERATE_FP8_MARGIN.*'two'"):
        fp8lab.Recipe.from_env({"ACCELERATE_FP8_MARGIN": "two"})
    with pytest.raises(ValueError, match=r"runs_as.*'sideways'.*accepted"):
        fp8lab.Recipe.from_env({"ACCELERATE_FP8_MARGIN": "1"}, runs_as="sideways")
    with pytest.raises(TypeError, match=r"accepted: a dict of str to str"):
        fp8lab.Recipe.from_env({"ACCELERATE_FP8_MARGIN": 1})
    with pytest.raises(TypeError, match=r"env is a list; accepted: None \(os.environ\) or a "
                                        r"mapping of str to str"):
        fp8lab.Recipe.from_env([("ACCELERATE_FP8_MARGIN", "1")])


def test_recipe_from_env_defaults_to_the_process_environment(monkeypatch):
    for name in [k for k in os.environ if k.startswith("ACCELERATE_FP8_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ACCELERATE_FP8_MARGIN", "3")
    assert fp8lab.Recipe.from_env() == fp8lab.Recipe.te(margin=3)


def test_recipe_from_env_is_what_fp8lab_explain_env_prints():
    command = os.environ.get("FP8LAB_CLI")
    if not command:
        pytest.skip("FP8LAB_CLI is not set (scripts/test sets it to build/experiments/fp8lab)")
    env = {"ACCELERATE_FP8_BACKEND": "TE", "ACCELERATE_FP8_MARGIN": "2",
           "ACCELERATE_FP8_AMAX_COMPUTE_ALGO": "MAX"}
    run = subprocess.run([command, "explain", "--env"], env={**env, "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True)
    assert run.returncode == 0, run
    asked = run.stdout.split("== recipe fp8lab runs")[1].split("\n== ")[0]
    assert fp8lab.Recipe.from_env(env).describe().strip() in asked, run.stdout


def test_recipe_from_file_reads_accelerate_configs():
    configs = ROOT / "recipes/configs"
    assert fp8lab.Recipe.from_file(str(configs / "accelerate-te-default.yaml")) == \
        fp8lab.Recipe.te()
    assert fp8lab.Recipe.from_file(str(configs / "accelerate-ao.yaml")).scaling == "tensorwise"
    block = fp8lab.Recipe.from_file(str(configs / "recipe-block.yaml"), runs_as="upstream")
    assert block.scaling == "block"


@pytest.mark.parametrize("name, text, message", [
    ("bad.yaml", "scaling: current\nmx_scale_mode: floor\n",
     ":2: mx_scale_mode.*applies to the MX scalings only"),
    ("acc.yaml", "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  margin: lots\n", ":4.*margin"),
], ids=["recipe", "accelerate_config"])
def test_recipe_file_errors_name_the_file(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=f"^{re.escape(str(path))}{message}"):
        fp8lab.Recipe.from_file(str(path))


# ---- keep_high_precision ---------------------------------------------------------------------

def test_keep_high_precision_adds_patterns_as_the_cli_field():
    r = fp8lab.Recipe("scaling: current").keep_high_precision(layers=["0"],
                                                              wgrad=[r"blocks\.\d+\.fc"])
    assert r == fp8lab.Recipe(
        "{scaling: current, keep_high_precision: {layers: ['0'], wgrad: ['blocks\\.\\d+\\.fc']}}")
    assert not r.plan("input", "fprop", "0")["runs_fp8"]
    assert not r.plan("input", "wgrad", "blocks.3.fc")["runs_fp8"]
    assert r.plan("input", "fprop", "blocks.3.fc")["runs_fp8"]
    # Patterns add up; one in all three GEMM lists keeps the whole layer (the canonical form).
    both = r.keep_high_precision(fprop=["x"], dgrad=["x"], wgrad=["x"])
    assert both == r.keep_high_precision(layers=["x"])
    m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16))
    fp8lab.convert_model(m, fp8lab.Recipe("scaling: current").keep_high_precision(dgrad=["2"]))
    assert m[2]._runs_fp8 == {"fprop": True, "dgrad": False, "wgrad": True}


def test_keep_high_precision_refuses_bad_patterns():
    r = fp8lab.Recipe("scaling: current")
    with pytest.raises(ValueError, match=r"keep_high_precision.layers.*\(blocks"):
        r.keep_high_precision(layers=["(blocks"])
    with pytest.raises(TypeError, match=r"layers is a str; accepted: a list of str"):
        r.keep_high_precision(layers="blocks")
    with pytest.raises(TypeError, match=r"wgrad\[1\] is a int; accepted: a str"):
        r.keep_high_precision(wgrad=["a", 1])


# ---- autocast --------------------------------------------------------------------------------

def _mlp(gen):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=gen)))
    return torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))


def _step(model, x):
    model.zero_grad()
    loss = model(x).square().mean()
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def test_autocast_switches_recipe_and_precision(gen):
    x = torch.randn(8, 32, generator=gen)
    base = _mlp(gen)
    state = {k: v.clone() for k, v in base.state_dict().items()}

    def converted(recipe):
        m = _mlp(gen)
        m.load_state_dict(state)
        fp8lab.convert_model(m, recipe)
        return m

    current, rowwise = fp8lab.Recipe("scaling: current"), fp8lab.Recipe("scaling: rowwise")
    rowwise_filter = "{scaling: rowwise, module_filter: {skip_first_last_linear: false}}"
    want_rowwise = _step(converted(rowwise_filter), x)
    want_high = _step(converted(current.keep_high_precision(layers=[".*"])), x)
    m = converted(current)
    want_current = _step(m, x)
    with fp8lab.autocast(rowwise_filter):
        got = _step(m, x)
    assert torch.equal(got[0], want_rowwise[0]) and not torch.equal(got[0], want_current[0])
    with fp8lab.autocast(enabled=False):
        got_high = _step(m, x)
        with fp8lab.autocast(None):  # the innermost region decides: each Linear's own recipe
            assert torch.equal(_step(m, x)[0], want_current[0])
    assert torch.equal(got_high[0], want_high[0])
    for g, w in zip(got_high[1], want_high[1]):
        assert torch.equal(g, w)
    assert torch.equal(_step(m, x)[0], want_current[0])  # outside: its own recipe again
    assert rowwise != current


def test_autocast_refuses_bad_arguments():
    with pytest.raises(TypeError, match=r"enabled is a int; accepted: bool"):
        with fp8lab.autocast(enabled=1):
            pass
    with pytest.raises(ValueError, match=r"fp8_format: unknown value 'HYBRD'"):
        with fp8lab.autocast("fp8_format: HYBRD"):
            pass
    with pytest.raises(TypeError, match=r"text is a int; accepted: str"):
        with fp8lab.autocast(5):
            pass


def test_every_shipped_config_reads_back_as_the_same_recipe():
    # recipe_text_of_file writes the recipe to run back as recipe text and checks that the text
    # reads back to the same canonical string (recipes/recipe_text.hpp); every shipped file, as
    # asked and as upstream runs it, goes through that check here.
    read = 0
    for path in sorted((ROOT / "recipes/configs").glob("*.yaml")):
        for runs_as in ("asked", "upstream"):
            try:
                recipe = fp8lab.Recipe.from_file(str(path), runs_as=runs_as)
            except ValueError as e:  # a peer that refuses these settings, named as the CLI does
                assert runs_as == "upstream" and "refuses" in str(e), (path, e)
                continue
            assert recipe == fp8lab.Recipe(recipe.text), path
            read += 1
    assert read >= 15
