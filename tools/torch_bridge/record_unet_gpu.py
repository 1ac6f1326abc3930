"""Records the reduced-width SD 1.5 UNet of tests/python/torch_models.py on a CUDA GPU, in
float32 with TF32 and in float16, with mpsim.torch's recorder (torch and NumPy only):

    python3 tools/torch_bridge/record_unet_gpu.py OUT_DIR

docs/torch.md judges the two files with mpsim.torch.check_recording."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "python" / "mpsim" / "torch")]

import torch  # noqa: E402

import record  # noqa: E402  (python/mpsim/torch/record.py: no compiled mpsim needed)
import torch_models as tm  # noqa: E402


def main(out):
    out = pathlib.Path(out)
    torch.manual_seed(0)
    model = tm.UNet().eval().cuda()
    x = torch.randn(1, 4, 16, 16, device="cuda")
    t = torch.tensor([500], device="cuda")
    ctx = torch.randn(1, 77, 48, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    record.record(model, x, t, ctx, path=out / "unet_float32_tf32.npz")
    record.record(model.half(), x.half(), t, ctx.half(), path=out / "unet_float16.npz")
    print(torch.__version__, torch.cuda.get_device_name(0))


if __name__ == "__main__":
    main(sys.argv[1])
