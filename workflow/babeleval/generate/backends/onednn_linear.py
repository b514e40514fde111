"""A model's linear layers on a CPU, through oneDNN's matrix multiply instead of the BLAS that ``torch.mm`` calls.

torch's CPU wheels run a float32 ``nn.Linear`` through MKL's sgemm. On the development machine's AMD EPYC (2 cores,
AVX-512), oneDNN's kernel for the same product, which torch ships and its own compiler (inductor) emits for CPU
linear layers, ran a scoring pass's products 1.14-1.33x as fast and a 16-row decoding step's 1.22-1.54x; the
scorer took 5-9% less time on the CPU benchmark, generation 9% less, a whole text-choice run 5% less
(``bench/linear_kernels.py``; bench/RESULTS.md, section 1, "Linear layers through oneDNN"). The products are the
same sums in another order: scores move by float rounding only.

``route`` makes each plain ``nn.Linear`` of a model a ``OneDnnLinear`` (its parameters stay where they are, so
tied weights, ``state_dict`` and saving are untouched). Whether oneDNN can be used is checked first, once, against
``torch.nn.functional.linear`` (``usable``); a call that oneDNN's operator does not cover (gradients wanted, not
float32 on the CPU, a 1-D input) goes to ``nn.Linear``'s own ``forward``.
"""

from __future__ import annotations

from functools import cache

import torch


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``x @ weight.T + bias`` by oneDNN: the operator torch's compiler (inductor) emits for a CPU linear layer.

    Not a public torch API, hence ``usable``'s check before any model is pointed at it.
    """
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")


@cache
def usable() -> bool:
    """Whether this torch has oneDNN's linear operator and it computes what ``nn.functional.linear`` does."""
    if not torch.backends.mkldnn.is_available() or not hasattr(torch.ops.mkldnn, "_linear_pointwise"):
        return False
    generator = torch.Generator().manual_seed(0)
    x, weight, bias = (torch.randn(shape, generator=generator) for shape in ((2, 3, 16), (8, 16), (8,)))
    try:
        with torch.inference_mode():
            got = linear(x, weight, bias)
    except (RuntimeError, TypeError):  # an operator of another signature, or one this build cannot run
        return False
    return got.shape == (2, 3, 8) and torch.allclose(got, torch.nn.functional.linear(x, weight, bias), atol=1e-5)


class OneDnnLinear(torch.nn.Linear):
    """A linear layer whose float32 inference calls go to oneDNN; ``route`` makes a model's plain layers this class.

    A class rather than a per-layer function: a function stored on the layer would hold the layer in a reference
    cycle, which only the cyclic collector frees, and a loaded model's objects are frozen out of its reach
    (``core.gc_pause``): a dropped model's weights would never be freed.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() or x.dim() < 2 or x.device.type != "cpu" \
                or x.dtype != torch.float32 or self.weight.dtype != torch.float32:
            return super().forward(x)  # the operator has no backward, and is used here for CPU float32 only
        return linear(x, self.weight, self.bias)


def route(model: torch.nn.Module) -> int:
    """Point a CPU float32 model's plain linear layers at oneDNN; returns how many (0 where oneDNN is not usable).

    Subclasses of ``nn.Linear`` (quantized or adapter layers, and layers already routed) keep their own ``forward``.
    """
    if not usable():
        return 0
    layers = [m for m in model.modules() if type(m) is torch.nn.Linear
              and m.weight.device.type == "cpu" and m.weight.dtype == torch.float32]
    for layer in layers:
        layer.__class__ = OneDnnLinear
    return len(layers)
