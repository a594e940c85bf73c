"""fp8lab.Recipe, convert_model and fp8lab.Linear: recipes read by recipes/ with its messages,
the module filter, and training through the ops (exact where the operands are exact in FP8)."""

import pathlib
import warnings

import pytest
import torch

import fp8lab

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ---- Recipe ----------------------------------------------------------------------------------

def test_recipe_te_takes_te_kwargs_and_checks_them_with_the_cli_messages():
    assert fp8lab.Recipe.te() == fp8lab.Recipe("")
    assert fp8lab.Recipe.te(fp8_format="E4M3", margin=None) == fp8lab.Recipe("fp8_format: E4M3")
    assert fp8lab.Recipe.te().scaling == "delayed"
    assert fp8lab.Recipe.te(use_mxfp8_block_scaling=True).scaling == "mxfp8"
    r = fp8lab.Recipe.te(override_linear_precision=(False, False, True))
    assert not r.plan("input", "wgrad")["runs_fp8"] and r.plan("input", "fprop")["runs_fp8"]
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['fp8_fromat'\]"):
        fp8lab.Recipe.te(fp8_fromat="E4M3")
    with pytest.raises(ValueError, match=r"HYBRD.*accepted: HYBRID, E4M3, E5M2"):
        fp8lab.Recipe.te(fp8_format="HYBRD")
    with pytest.raises(ValueError, match=r"margin.*not supported for MXFP8 block scaling"):
        fp8lab.Recipe.te(use_mxfp8_block_scaling=True, margin=2)


def test_recipe_from_file():
    r = fp8lab.Recipe.from_file(str(ROOT / "recipes/configs/recipe-block.yaml"))
    assert r.scaling == "block" and "scaling: block" in r.describe()
    # accelerate configs, and the errors of bad files: test_recipe_sources.py.
    with pytest.raises(ValueError, match=r"/nonexistent.yaml: cannot read"):
        fp8lab.Recipe.from_file("/nonexistent.yaml")


# ---- convert_model ---------------------------------------------------------------------------

def test_convert_model_follows_the_module_filter():
    def model():
        return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Linear(64, 10),
                                   torch.nn.Linear(10, 16), torch.nn.Linear(16, 16))

    # TE's rule (the default for delayed): the indivisible 64 -> 10 ends its parent's conversion.
    m = model()
    assert fp8lab.convert_model(m, fp8lab.Recipe.te()) == ["0"]
    assert fp8lab.has_fp8_layers(m) and isinstance(m[3], torch.nn.Linear)
    loose = "{scaling: current, module_filter: {skip_later_siblings_after_indivisible: false}}"
    assert fp8lab.convert_model(model(), loose) == ["0", "3"]
    assert fp8lab.convert_model(model(), loose, lambda mod, name: name != "3") == ["0"]
    skip = "{scaling: current, module_filter: {skip_later_siblings_after_indivisible: false, " \
           "skip_names: ['?']}}"
    assert fp8lab.convert_model(model(), skip) == []
    assert not fp8lab.has_fp8_layers(model())
    with pytest.raises(ValueError, match=r"weight has dtype torch.float64"):
        fp8lab.convert_model(torch.nn.Sequential(torch.nn.Linear(16, 16).double()), "")


# ---- convert_model on nn.Transformer layers: which Linears each peer converts -----------------

def _encoder_model():
    # The model of issue 42: MultiheadAttention's out_proj is a NonDynamicallyQuantizableLinear,
    # an nn.Linear subclass, and the first Linear of named_modules() by isinstance.
    return torch.nn.Sequential(torch.nn.TransformerEncoderLayer(64, 4, 160, batch_first=True),
                               torch.nn.Flatten(), torch.nn.Linear(1024, 10))


# accelerate + torchao. huggingface/accelerate src/accelerate/utils/ao.py:
# find_first_last_linear_layers takes the first and last module of named_modules() with
# isinstance(module, torch.nn.Linear) (here '0.self_attn.out_proj' and '2'); filter_linear_layers
# rejects an isinstance Linear whose in or out features % 16 != 0, then those two names. pytorch/ao
# torchao/float8/float8_linear_utils.py: convert_to_float8_training -> swap_linear_layers swaps
# every isinstance(module, nn.Linear) that the filter allows.
_AO_ACCELERATE = ["0.linear1", "0.linear2"]
# torchao alone (AORecipeKwargs.module_filter_func replaces accelerate's filter): every Linear.
_AO_ALL = ["0.self_attn.out_proj", "0.linear1", "0.linear2", "2"]
# accelerate + TE. huggingface/accelerate src/accelerate/utils/transformer_engine.py: convert_model
# swaps each isinstance(module, nn.Linear) child over named_children(), no first/last rule, and
# returns from the parent at the first Linear with a weight dim % 16 != 0 (the head, 1024 -> 10).
_TE_ACCELERATE = ["0.self_attn.out_proj", "0.linear1", "0.linear2"]

_ENCODER_SOURCES = [
    ("Recipe.ao(config='tensorwise')", lambda: fp8lab.Recipe.ao(config="tensorwise"),
     _AO_ACCELERATE),
    ("Recipe.ao()", lambda: fp8lab.Recipe.ao(), _AO_ACCELERATE),
    ("Recipe.ao(config='rowwise')", lambda: fp8lab.Recipe.ao(config="rowwise"), _AO_ACCELERATE),
    ("Recipe.from_env(AO)", lambda: fp8lab.Recipe.from_env({"ACCELERATE_FP8_BACKEND": "AO"}),
     _AO_ACCELERATE),
    ("Recipe.from_file(accelerate-ao.yaml)",
     lambda: fp8lab.Recipe.from_file(str(ROOT / "recipes/configs/accelerate-ao.yaml")),
     _AO_ACCELERATE),
    ("Recipe('scaling: tensorwise')", lambda: fp8lab.Recipe("scaling: tensorwise"),
     _AO_ACCELERATE),
    ("Recipe.ao(module_filter_func=all)",
     lambda: fp8lab.Recipe.ao(module_filter_func=lambda module, fqn: True), _AO_ALL),
    ("Recipe.te()", lambda: fp8lab.Recipe.te(), _TE_ACCELERATE),
    ("Recipe.te(use_mxfp8_block_scaling=True)",
     lambda: fp8lab.Recipe.te(use_mxfp8_block_scaling=True), _TE_ACCELERATE),
    ("Recipe.from_env(TE)", lambda: fp8lab.Recipe.from_env({"ACCELERATE_FP8_BACKEND": "TE"}),
     _TE_ACCELERATE),
    ("Recipe.from_file(accelerate-te-default.yaml)",
     lambda: fp8lab.Recipe.from_file(str(ROOT / "recipes/configs/accelerate-te-default.yaml")),
     _TE_ACCELERATE),
    ("Recipe('scaling: current')", lambda: fp8lab.Recipe("scaling: current"), _TE_ACCELERATE),
]


@pytest.mark.parametrize("source,make,want", _ENCODER_SOURCES, ids=[s[0] for s in _ENCODER_SOURCES])
def test_convert_model_converts_the_linears_each_peer_converts(source, make, want):
    model = _encoder_model()
    assert fp8lab.convert_model(model, make()) == want, source
    assert [n for n, m in model.named_modules() if isinstance(m, fp8lab.Linear)] == want
    # What stays is the module it was (out_proj keeps its NonDynamicallyQuantizableLinear).
    assert all(type(m) is not fp8lab.Linear for n, m in model.named_modules()
               if isinstance(m, torch.nn.Linear))


def test_convert_model_with_recipe_ao_equals_torchaos_own_conversion():
    float8 = pytest.importorskip("torchao.float8")
    float8_linear = pytest.importorskip("torchao.float8.float8_linear")

    def torchao_converts(module_filter_fn):
        model = _encoder_model()
        float8.convert_to_float8_training(
            model, module_filter_fn=module_filter_fn,
            config=float8.Float8LinearConfig.from_recipe_name("tensorwise"))
        return [n for n, m in model.named_modules()
                if isinstance(m, float8_linear.Float8Linear)]

    # accelerate's default filter, stated again from src/accelerate/utils/ao.py (not imported:
    # accelerate is not a dependency).
    names = [n for n, m in _encoder_model().named_modules() if isinstance(m, torch.nn.Linear)]

    def accelerates_filter(module, fqn):
        if isinstance(module, torch.nn.Linear) and (module.in_features % 16
                                                    or module.out_features % 16):
            return False
        return fqn not in (names[0], names[-1])

    assert torchao_converts(accelerates_filter) == _AO_ACCELERATE
    assert fp8lab.convert_model(_encoder_model(), fp8lab.Recipe.ao(config="tensorwise")) == \
        torchao_converts(accelerates_filter)
    assert torchao_converts(None) == _AO_ALL
    assert fp8lab.convert_model(
        _encoder_model(), fp8lab.Recipe.ao(module_filter_func=lambda module, fqn: True)
    ) == torchao_converts(None)


@pytest.mark.parametrize("recipe,uncalled", [
    (lambda: fp8lab.Recipe.te(amax_history_len=4), ["0.self_attn.out_proj"]),
    (lambda: fp8lab.Recipe.ao(module_filter_func=lambda module, fqn: True),
     ["0.self_attn.out_proj"]),
    (lambda: fp8lab.Recipe.ao(config="tensorwise"), []),
], ids=["te", "ao-no-filter", "ao-accelerate-filter"])
def test_converted_linear_that_never_runs_is_named_once(gen, recipe, uncalled):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=gen)))
    model = _encoder_model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converting says nothing yet
        converted = fp8lab.convert_model(model, recipe())
    called = []
    for name, module in model.named_modules():
        if isinstance(module, fp8lab.Linear):
            module.register_forward_hook(lambda m, args, out, name=name: called.append(name))
    x, target = torch.randn(4, 16, 64, generator=gen), torch.randint(0, 10, (4,), generator=gen)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an eval forward under no_grad is no training step
        model.eval()
        with torch.no_grad():
            model(x)
    model.train()
    called.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            loss = torch.nn.functional.cross_entropy(model(x), target)
            loss.backward()
    # MultiheadAttention reads out_proj.weight and out_proj.bias itself: its forward never runs.
    assert sorted(set(called)) == sorted(n for n in converted if n not in uncalled)
    messages = [str(w.message) for w in caught if "did not run its forward" in str(w.message)]
    assert len(messages) == len(uncalled)  # once per module, not once per step
    for name, message in zip(uncalled, messages):
        assert message.startswith(f"fp8lab.convert_model: converted Linear '{name}' did not run "
                                  "its forward in the model's first training forward pass")
        assert "torch.nn.MultiheadAttention passes out_proj.weight and out_proj.bias" in message
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_keep_high_precision_by_layer():
    recipe = fp8lab.Recipe("{scaling: current, keep_high_precision: {layers: ['0'], wgrad: ['2']}}")
    m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16))
    fp8lab.convert_model(m, recipe)
    assert m[0]._runs_fp8 == {"fprop": False, "dgrad": False, "wgrad": False}
    assert m[2]._runs_fp8 == {"fprop": True, "dgrad": True, "wgrad": False}


def test_keep_pattern_matching_no_linear_warns_and_keeps_nothing():
    # 'blocks\.0' names no Linear of this model (its Linears are '0' and '2'): converted anyway,
    # with a warning naming the pattern; the pattern that matches ('2') gives no warning.
    recipe = fp8lab.Recipe("{scaling: current, keep_high_precision: {layers: ['blocks\\.0'], "
                           "wgrad: ['2']}}")
    m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16))
    with pytest.warns(UserWarning) as caught:
        assert fp8lab.convert_model(m, recipe) == ["0", "2"]
    messages = [str(w.message) for w in caught]
    assert messages == ["keep_high_precision pattern 'blocks\\.0' matches none of the model's 2 "
                        "Linears (the first is '0'); it keeps nothing in high precision"]
    assert m[0]._runs_fp8 == {"fprop": True, "dgrad": True, "wgrad": True}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fp8lab.convert_model(torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(),
                                                 torch.nn.Linear(16, 16)),
                             "{scaling: current, keep_high_precision: {wgrad: ['2']}}")

def test_gemms_kept_in_high_precision_run_sims_high_precision_gemm(gen):
    # override_linear_precision (False, True, True): fprop in FP8, dgrad and wgrad through
    # fp8lab.high_precision_mm, which the fp32 sequential sum equals (test_ops.py).
    recipe = fp8lab.Recipe("{scaling: current, override_linear_precision: [false, true, true]}")
    m = torch.nn.Sequential(torch.nn.Linear(48, 32))
    fp8lab.convert_model(m, recipe)
    x = torch.randn(16, 48, generator=gen, requires_grad=True)
    g = torch.randn(16, 32, generator=gen)
    (m(x) * g).sum().backward()
    w = m[0].weight.detach()
    assert torch.equal(x.grad, fp8lab.high_precision_mm(g, w, "dgrad"))
    assert torch.equal(m[0].weight.grad, fp8lab.high_precision_mm(g, x.detach(), "wgrad"))
    assert not torch.equal(x.grad, g @ w) or not torch.equal(m[0].weight.grad, g.T @ x.detach())
    # The bias gradient: the fp32 sum over rows in increasing order (the C++ Linear's).
    row_sum = torch.zeros(32)
    for row in g:
        row_sum = row_sum + row
    assert torch.equal(m[0].bias.grad, row_sum)


EXACT_RECIPES = ["", "{scaling: current, power_2_scales: true}", "{scaling: mxfp8}",
                 "{scaling: block}"]


@pytest.mark.parametrize("recipe", EXACT_RECIPES)
def test_linear_of_exact_operands_equals_torch_in_all_three_gemms(gen, recipe):
    # Integers in [-8, 8] (at most 3 significant bits: exact in E4M3) and gradients in
    # {0, +-1, +-2, +-4, +-8} (exact in E5M2), with power-of-2 scales (or delayed scaling's first
    # step, scale 1): every cast is exact and every sum is an exact integer, so fprop, dgrad,
    # wgrad and the bias gradient equal torch's fp32 Linear to the bit.
    ref = torch.nn.Linear(64, 32)
    with torch.no_grad():
        ref.weight.copy_(torch.randint(-8, 9, (32, 64), generator=gen).float())
        ref.bias.copy_(torch.randint(-8, 9, (32,), generator=gen).float())
    ours = torch.nn.Sequential(torch.nn.Linear(64, 32))
    ours[0].load_state_dict(ref.state_dict())
    assert fp8lab.convert_model(ours, recipe) == ["0"]
    x = torch.randint(-8, 9, (2, 24, 64), generator=gen).float()
    signs = torch.randint(0, 2, (2, 24, 32), generator=gen).float() * 2 - 1
    g = signs * torch.exp2(torch.randint(-1, 4, (2, 24, 32), generator=gen).float()).floor()
    xr, xo = x.clone().requires_grad_(), x.clone().requires_grad_()
    yr, yo = ref(xr), ours(xo)
    assert torch.equal(yo, yr)
    (yr * g).sum().backward()
    (yo * g).sum().backward()
    assert torch.equal(xo.grad, xr.grad)
    assert torch.equal(ours[0].weight.grad, ref.weight.grad)
    assert torch.equal(ours[0].bias.grad, ref.bias.grad)
    assert xr.grad.count_nonzero() > 0 and ref.weight.grad.count_nonzero() > 0


def test_convert_model_with_recipe_te_trains_a_step(gen):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16))
    recipe = fp8lab.Recipe.te(amax_history_len=4, amax_compute_algo="max")
    assert fp8lab.convert_model(model, recipe) == ["0", "2"]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, target = torch.randn(8, 32, generator=gen), torch.randn(8, 16, generator=gen)
    before = [p.detach().clone() for p in model.parameters()]
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(torch.isfinite(torch.tensor(losses)))
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
    assert losses[-1] < losses[0]
    # The delayed state moved at TE's moments: 3 forward and 3 backward updates per layer, and
    # the scales are RN(448 / amax) of the histories' maxima (HYBRID: E4M3 forward, E5M2 back).
    state = model[0]._delayed
    assert state.forward[2] == 3 and state.backward[2] == 3
    forward_history, forward_scale = state.forward[0], state.forward[1]
    assert torch.equal(forward_scale, torch.tensor(448.0) / forward_history.max(0).values)
    assert torch.equal(state.backward[1],
                       torch.tensor(57344.0) / state.backward[0].max(0).values)
    # Eval without use_autocast_during_eval runs in high precision, as TE does.
    with torch.no_grad():
        out = model(x)
    assert torch.isfinite(out).all()
