"""torch.compile over a model that convert_model converted: it traces the ops through their fake
kernels and gives the eager model's bits."""

import pytest
import torch

import fp8lab


@pytest.mark.parametrize("recipe", ["scaling: current", "scaling: rowwise",
                                    "{scaling: mxfp8, mx_scale_mode: floor}"])
def test_compiled_converted_model_gives_the_eager_bits(gen, recipe):
    torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=gen)))
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 32))
    fp8lab.convert_model(model, fp8lab.Recipe(recipe).keep_high_precision(wgrad=["2"]))
    x = torch.randn(32, 64, generator=gen)

    def step(m):
        model.zero_grad()
        loss = m(x).square().mean()
        loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters()]

    want = step(model)
    # aot_eager: Dynamo and AOTAutograd trace the ops (fake kernels, autograd) and run the traced
    # graph eagerly, so no C++ compiler is needed to test it.
    got = step(torch.compile(model, backend="aot_eager"))
    assert torch.equal(got[0], want[0]), (got[0].item(), want[0].item())
    for g, w in zip(got[1], want[1]):
        assert torch.equal(g, w)
