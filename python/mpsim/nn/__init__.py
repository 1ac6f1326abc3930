"""mpsim.nn: torch.nn's functional interface (mpsim.nn.functional)."""

from . import functional  # noqa: F401
