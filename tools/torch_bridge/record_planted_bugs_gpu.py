"""Records two float16 blocks of tests/python/torch_models.py on a CUDA GPU with a wrong kernel
planted (torch and NumPy only): a softmax without the max subtraction under wide attention
logits, and a group_norm without eps over near-constant groups.

    python3 tools/torch_bridge/record_planted_bugs_gpu.py OUT_DIR

tests/python/test_torch_bridge.py judges the stored files (tests/fixtures/torch/) with
mpsim.torch.check_recording: the wrong kernel is the report's first failure."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "python" / "mpsim" / "torch")]

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import record  # noqa: E402
import torch_models as tm  # noqa: E402


class WrongKernels(TorchDispatchMode):
    """Entered outside the recorder, so the recorder sees their outputs as the kernels'."""

    def __init__(self, which):
        super().__init__()
        self.which = which

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if self.which == "softmax" and name == "_softmax":
            e = torch.exp(args[0])  # float16: inf above 11.09
            return e / e.sum(args[1], keepdim=True)
        if self.which == "group_norm" and name == "native_group_norm":
            x, w, b, N, C, HxW, groups, eps = args
            g = x.float().reshape(N, groups, -1)
            mean = g.mean(-1, keepdim=True)
            var = g.var(-1, unbiased=False, keepdim=True)
            shape = (1, C) + (1,) * (x.dim() - 2)
            y = ((g - mean) / var.sqrt()).reshape(x.shape) * w.float().reshape(shape) + \
                b.float().reshape(shape)  # eps dropped
            return y.to(x.dtype), mean.reshape(N, groups).to(x.dtype), \
                var.reshape(N, groups).to(x.dtype)
        return func(*args, **(kwargs or {}))


def main(out):
    out = pathlib.Path(out)
    torch.manual_seed(1)
    block = tm.TransformerBlock(32, 4, 48).eval()
    with torch.no_grad():
        block.attn1.to_q.weight.mul_(16)  # logits beyond 11.09: exp overflows float16
    block.attn1.fused = block.attn2.fused = False
    block = block.cuda().half()
    x = torch.randn(1, 64, 32, device="cuda", dtype=torch.float16)
    ctx = torch.randn(1, 77, 48, device="cuda", dtype=torch.float16)
    with WrongKernels("softmax"):
        record.record(block, x, ctx, path=out / "softmax_without_max_float16.npz", sample=512)
    torch.manual_seed(2)
    res = tm.ResnetBlock(32, 32, 8).eval().cuda().half()
    z = (1 + 1e-3 * torch.randn(1, 32, 16, 16, device="cuda")).half()
    with WrongKernels("group_norm"):
        record.record(res, z, path=out / "group_norm_without_eps_float16.npz", sample=512)
    print(torch.__version__, torch.cuda.get_device_name(0))


if __name__ == "__main__":
    main(sys.argv[1])
