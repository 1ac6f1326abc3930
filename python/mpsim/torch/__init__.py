"""mpsim.torch: PyTorch models checked op by op against mpsim (docs/torch.md).

    report = mpsim.torch.check(model, x)       # every aten call judged on mpsim's golden path
    print(report); report.first_failure; report.to_json()

check runs the model as it is (on cuda, torch's mps or the cpu) and, for every aten op call,
recomputes that call on mpsim's golden cpu path from the same inputs and judges the output with
mpsim.testing's bound for `compute` (each op in isolation: errors do not compound).

    out = mpsim.torch.run(model, x, device="mps")   # the model's aten ops executed by mpsim
    b = mpsim.torch.bound(model, x)                  # the composed bound of a whole run
    b.ratio(out) <= 1"""

try:
    import torch as _torch
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("mpsim.torch needs PyTorch (Debian: python3-torch; PyTorch 1.13 and 2.x "
                      "work)") from e

from ._check import Report, Row, check  # noqa: E402,F401
from ._bound import Bound, bound  # noqa: E402,F401
from ._run import RunInfo, last_run, run  # noqa: E402,F401
from ._recording import check_recording  # noqa: E402,F401
from .record import record  # noqa: E402,F401
