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

import record  # noqa: E402
import torch_models as tm  # noqa: E402


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
    with tm.WrongKernels("softmax"):
        record.record(block, x, ctx, path=out / "softmax_without_max_float16.npz", sample=512)
    torch.manual_seed(2)
    res = tm.ResnetBlock(32, 32, 8).eval().cuda().half()
    z = (1 + 1e-3 * torch.randn(1, 32, 16, 16, device="cuda")).half()
    with tm.WrongKernels("group_norm"):
        record.record(res, z, path=out / "group_norm_without_eps_float16.npz", sample=512)
    print(torch.__version__, torch.cuda.get_device_name(0))


if __name__ == "__main__":
    main(sys.argv[1])
