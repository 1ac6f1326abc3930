"""mpsim.torch in-process under PyTorch 2.x on a CUDA GPU, with mpsim built there
(tools/torch_bridge/build_module_elsewhere.sh): check() of the test models run on the GPU in
float32 (TF32 on, judged with compute="tf32") and float16 (compute=None), the planted wrong
kernels (tests/python/torch_models.py's WrongKernels) named as the first failure, and run() /
bound() of the models on the CPU:

    PYTHONPATH=/tmp/pkg python3 tools/torch_bridge/check_in_process_gpu.py OUT_DIR

writes OUT_DIR/in_process_gpu.json and prints a summary (docs/torch.md, "PyTorch 2.x")."""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import torch  # noqa: E402

import mpsim.torch as mt  # noqa: E402
import torch_models as tm  # noqa: E402


def gpu_models(dtype):
    torch.manual_seed(0)
    cuda = {"device": "cuda", "dtype": dtype}
    return {
        "unet": (tm.UNet().eval().to(**cuda), (torch.randn(1, 4, 16, 16, **cuda),
                                               torch.tensor([500], device="cuda"),
                                               torch.randn(1, 77, 48, **cuda))),
        "vae_decoder": (tm.VAEDecoder().eval().to(**cuda), (torch.randn(1, 4, 16, 16, **cuda),)),
        "clip_text": (tm.CLIPTextEncoder().eval().to(**cuda),
                      (torch.randint(0, 1000, (1, 77), device="cuda"),)),
        "vit": (tm.ViT().eval().to(**cuda), (torch.randn(2, 3, 32, 32, **cuda),)),
    }


def summary(report):
    f = report.first_failure
    counts = report.counts()
    judged = [r for r in report.rows if r.status == "judged"]
    return {"ok": report.ok, "counts": counts,
            "worst_ratio": max((r.worst_ratio for r in judged), default=0.0),
            "first_failure": None if f is None else {"index": f.index, "aten": f.aten,
                                                     "module": f.module,
                                                     "worst_ratio": f.worst_ratio,
                                                     "nan_introduced": f.nan_introduced},
            "atens": sorted({r.aten for r in report.rows})}


def main(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "check": {},
              "planted": {}, "run": {}}
    for dtype, compute, tf32 in ((torch.float32, "tf32", True), (torch.float16, None, False)):
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
        for name, (model, args) in gpu_models(dtype).items():
            report = mt.check(model, *args, compute=compute)
            key = f"{name}_{str(dtype).replace('torch.', '')}"
            result["check"][key] = summary(report)
            if name == "unet":
                (out / f"{key}_in_process.txt").write_text(str(report))
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False

    torch.manual_seed(1)
    block = tm.TransformerBlock(32, 4, 48).eval()
    with torch.no_grad():
        block.attn1.to_q.weight.mul_(16)
    block.attn1.fused = block.attn2.fused = False
    block = block.cuda().half()
    x = torch.randn(1, 64, 32, device="cuda", dtype=torch.float16)
    ctx = torch.randn(1, 77, 48, device="cuda", dtype=torch.float16)
    with tm.WrongKernels("softmax"):
        result["planted"]["softmax_without_max"] = summary(mt.check(block, x, ctx))
    torch.manual_seed(2)
    res = tm.ResnetBlock(32, 32, 8).eval().cuda().half()
    z = (1 + 1e-3 * torch.randn(1, 32, 16, 16, device="cuda")).half()
    with tm.WrongKernels("group_norm"):
        result["planted"]["group_norm_without_eps"] = summary(mt.check(res, z))

    from test_torch_bridge import MODELS, worst_elements
    for name, (fn, args) in sorted(MODELS.items()):
        for device in ("cpu", "mps"):
            ours = mt.run(fn, *args, device=device)
            exact = mt.bound(fn, *args, samples=0).exact
            if not ours.is_floating_point():
                result["run"][f"{name}_{device}"] = {"tokens_equal": bool(torch.equal(ours,
                                                                                      exact))}
                continue
            b = mt.bound(fn, *args, indices=worst_elements(ours, exact), samples=8)
            result["run"][f"{name}_{device}"] = {
                "calls": mt.last_run().calls, "fallbacks": mt.last_run().fallbacks,
                "ratio": b.ratio(ours)}
    (out / "in_process_gpu.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
