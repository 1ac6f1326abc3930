"""Records every test model of tests/python/torch_models.py on a CUDA GPU with PyTorch 2.x
(whose attention is F.scaled_dot_product_attention: the fused flash / efficient attention
ops), in float32 (TF32 off) and float16, with mpsim.torch's recorder (torch and NumPy only):

    python3 tools/torch_bridge/record_models_gpu.py OUT_DIR

docs/torch.md judges the files with mpsim.torch.check_recording."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "python"), str(ROOT / "python" / "mpsim" / "torch")]

import torch  # noqa: E402

import record  # noqa: E402
import torch_models as tm  # noqa: E402


def main(out):
    out = pathlib.Path(out)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for dtype in (torch.float32, torch.float16):
        torch.manual_seed(0)
        cuda = {"device": "cuda", "dtype": dtype}
        models = {
            "clip_text": (tm.CLIPTextEncoder(), (torch.randint(0, 1000, (1, 77), device="cuda"),)),
            "vae_decoder": (tm.VAEDecoder(), (torch.randn(1, 4, 16, 16, **cuda),)),
            "vit": (tm.ViT(), (torch.randn(2, 3, 32, 32, **cuda),)),
        }
        for name, (model, args) in models.items():
            model = model.eval().to(**cuda)
            if name == "clip_text":  # the causal mask is made in float32 on the CPU
                model.forward = _clip_forward(model, dtype)
            path = out / f"{name}_{str(dtype).replace('torch.', '')}.npz"
            record.record(model, *args, path=path, sample=512)
    print(torch.__version__, torch.cuda.get_device_name(0))


def _clip_forward(model, dtype):
    def forward(tokens):
        L = tokens.shape[1]
        x = model.token_embedding(tokens) + model.position_embedding[:L]
        mask = torch.full((L, L), float("-inf"), device=tokens.device, dtype=dtype).triu(1)
        for layer in model.layers:
            x = x + layer["attn"](layer["ln_1"](x), mask=mask)
            h = layer["fc1"](layer["ln_2"](x))
            x = x + layer["fc2"](h * torch.sigmoid(1.702 * h))
        return model.final_layer_norm(x)
    return forward


if __name__ == "__main__":
    main(sys.argv[1])
