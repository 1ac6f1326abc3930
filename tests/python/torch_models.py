"""Small versions of the models mpsim.torch is tested on, written from their published
architectures with torch.nn and random weights (reduced widths; no downloads): Stable Diffusion
1.5's CLIP text encoder, UNet2DConditionModel blocks and VAE decoder blocks and three scheduler
steps, GPT-2 generation with a KV cache, and a ViT-B/16 classifier."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode


class Attention(nn.Module):
    """Multi-head attention as diffusers' and CLIP's: q, k, v projections, softmax(q k^T / sqrt(d)
    (+ mask)) v, output projection; context for cross-attention."""

    def __init__(self, dim, heads, context_dim=None, bias=False):
        super().__init__()
        self.heads = heads
        self.fused = True  # False: softmax(q k^T / sqrt(d)) v in separate ops, also in 2.x
        self.to_q = nn.Linear(dim, dim, bias=bias)
        self.to_k = nn.Linear(context_dim or dim, dim, bias=bias)
        self.to_v = nn.Linear(context_dim or dim, dim, bias=bias)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x, context=None, mask=None):
        context = x if context is None else context
        B, L, D = x.shape
        h = self.heads

        def split(t):
            return t.reshape(B, -1, h, D // h).transpose(1, 2)

        q, k, v = split(self.to_q(x)), split(self.to_k(context)), split(self.to_v(context))
        if self.fused and hasattr(F, "scaled_dot_product_attention"):  # PyTorch 2.x's fused ops
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(D // h)
            if mask is not None:
                scores = scores + mask
            out = scores.softmax(dim=-1) @ v
        return self.to_out(out.transpose(1, 2).reshape(B, L, D))


class GEGLU(nn.Module):
    def __init__(self, dim, inner):
        super().__init__()
        self.proj = nn.Linear(dim, inner * 2)

    def forward(self, x):
        a, gate = self.proj(x).chunk(2, dim=-1)
        return a * F.gelu(gate)


class TransformerBlock(nn.Module):
    """diffusers' BasicTransformerBlock: self-attention, cross-attention, GEGLU feed-forward."""

    def __init__(self, dim, heads, context_dim):
        super().__init__()
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn1 = Attention(dim, heads)
        self.attn2 = Attention(dim, heads, context_dim)
        self.ff = nn.Sequential(GEGLU(dim, dim * 4), nn.Linear(dim * 4, dim))

    def forward(self, x, context):
        x = self.attn1(self.norm1(x)) + x
        x = self.attn2(self.norm2(x), context) + x
        return self.ff(self.norm3(x)) + x


class Transformer2D(nn.Module):
    def __init__(self, channels, heads, context_dim, groups):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels, eps=1e-6)
        self.proj_in = nn.Conv2d(channels, channels, 1)
        self.block = TransformerBlock(channels, heads, context_dim)
        self.proj_out = nn.Conv2d(channels, channels, 1)

    def forward(self, x, context):
        B, C, H, W = x.shape
        h = self.proj_in(self.norm(x)).permute(0, 2, 3, 1).reshape(B, H * W, C)
        h = self.block(h, context).reshape(B, H, W, C).permute(0, 3, 1, 2)
        return self.proj_out(h) + x


class ResnetBlock(nn.Module):
    def __init__(self, cin, cout, groups, temb=None):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin, eps=1e-6)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb, cout) if temb else None
        self.norm2 = nn.GroupNorm(groups, cout, eps=1e-6)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else None

    def forward(self, x, temb=None):
        h = self.conv1(F.silu(self.norm1(x)))
        if self.time_emb_proj is not None:
            h = h + self.time_emb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + (x if self.shortcut is None else self.shortcut(x))


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32,
                                                      device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class UNet(nn.Module):
    """UNet2DConditionModel at reduced width: conv_in, a down block (resnet + transformer +
    downsample), a mid block, an up block (upsample + resnet with skip + transformer), conv_out."""

    def __init__(self, ch=32, context_dim=48, heads=4, groups=8):
        super().__init__()
        temb = ch * 4
        self.time_embedding = nn.Sequential(nn.Linear(ch, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(4, ch, 3, padding=1)
        self.down_res = ResnetBlock(ch, ch, groups, temb)
        self.down_attn = Transformer2D(ch, heads, context_dim, groups)
        self.downsample = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.mid_res = ResnetBlock(ch, 2 * ch, groups, temb)
        self.mid_attn = Transformer2D(2 * ch, heads, context_dim, groups)
        self.up_conv = nn.Conv2d(2 * ch, ch, 3, padding=1)
        self.up_res = ResnetBlock(2 * ch, ch, groups, temb)
        self.up_attn = Transformer2D(ch, heads, context_dim, groups)
        self.norm_out = nn.GroupNorm(groups, ch)
        self.conv_out = nn.Conv2d(ch, 4, 3, padding=1)
        self.ch = ch

    def forward(self, sample, t, context):
        temb = self.time_embedding(timestep_embedding(t, self.ch).to(sample.dtype))
        h = self.conv_in(sample)
        skip = self.down_attn(self.down_res(h, temb), context)
        h = self.mid_attn(self.mid_res(self.downsample(skip), temb), context)
        h = self.up_conv(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = self.up_attn(self.up_res(torch.cat([h, skip], dim=1), temb), context)
        return self.conv_out(F.silu(self.norm_out(h)))


class VAEDecoder(nn.Module):
    def __init__(self, ch=32, groups=8):
        super().__init__()
        self.conv_in = nn.Conv2d(4, ch, 3, padding=1)
        self.mid = ResnetBlock(ch, ch, groups)
        self.attn_norm = nn.GroupNorm(groups, ch, eps=1e-6)
        self.attn = Attention(ch, 1, bias=True)
        self.up = ResnetBlock(ch, ch, groups)
        self.up_conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.norm_out = nn.GroupNorm(groups, ch, eps=1e-6)
        self.conv_out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, z):
        h = self.mid(self.conv_in(z / 0.18215))
        B, C, H, W = h.shape
        a = self.attn(self.attn_norm(h).reshape(B, C, H * W).transpose(1, 2))
        h = h + a.transpose(1, 2).reshape(B, C, H, W)
        h = self.up_conv(F.interpolate(self.up(h), scale_factor=2.0, mode="nearest"))
        return self.conv_out(F.silu(self.norm_out(h)))


class CLIPTextEncoder(nn.Module):
    """CLIP's text transformer: token and position embeddings, causal pre-norm layers with
    quick_gelu MLPs, a final layer norm."""

    def __init__(self, vocab=1000, width=48, heads=4, layers=2, length=77):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, width)
        self.position_embedding = nn.Parameter(torch.randn(length, width) * 0.01)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "ln_1": nn.LayerNorm(width), "attn": Attention(width, heads, bias=True),
                "ln_2": nn.LayerNorm(width), "fc1": nn.Linear(width, 4 * width),
                "fc2": nn.Linear(4 * width, width)}))
        self.final_layer_norm = nn.LayerNorm(width)

    def forward(self, tokens):
        L = tokens.shape[1]
        x = self.token_embedding(tokens) + self.position_embedding[:L]
        mask = torch.full((L, L), float("-inf"), device=x.device, dtype=x.dtype).triu(1)
        for layer in self.layers:
            x = x + layer["attn"](layer["ln_1"](x), mask=mask)
            h = layer["fc1"](layer["ln_2"](x))
            x = x + layer["fc2"](h * torch.sigmoid(1.702 * h))  # quick_gelu
        return self.final_layer_norm(x)


class GPT2(nn.Module):
    """GPT-2: token and position embeddings, pre-norm blocks with fused c_attn, a causal mask
    by torch.where, gelu_new (tanh form); generation appends one token at a time to a KV cache."""

    def __init__(self, vocab=500, width=64, heads=4, layers=2, max_len=64):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(max_len, width)
        self.heads = heads
        self.blocks = nn.ModuleList(nn.ModuleDict({
            "ln_1": nn.LayerNorm(width), "c_attn": nn.Linear(width, 3 * width),
            "c_proj": nn.Linear(width, width), "ln_2": nn.LayerNorm(width),
            "c_fc": nn.Linear(width, 4 * width), "mlp_proj": nn.Linear(4 * width, width)})
            for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.max_len = max_len

    def forward(self, tokens, cache=None):
        B, L = tokens.shape
        past = 0 if cache is None else cache[0][0].shape[2]
        x = self.wte(tokens) + self.wpe(torch.arange(past, past + L))
        new_cache = []
        for i, blk in enumerate(self.blocks):
            q, k, v = blk["c_attn"](blk["ln_1"](x)).split(x.shape[-1], dim=-1)
            q, k, v = (t.reshape(B, L, self.heads, -1).transpose(1, 2) for t in (q, k, v))
            if cache is not None:
                k = torch.cat([cache[i][0], k], dim=2)
                v = torch.cat([cache[i][1], v], dim=2)
            new_cache.append((k, v))
            S = k.shape[2]
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            causal = torch.ones(L, S, dtype=torch.bool).tril(S - L)
            scores = torch.where(causal, scores, torch.tensor(-1e4))
            a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, L, -1)
            x = x + blk["c_proj"](a)
            x = x + blk["mlp_proj"](F.gelu(blk["c_fc"](blk["ln_2"](x)), approximate="tanh"))
        return self.ln_f(x) @ self.wte.weight.t(), new_cache

    def generate(self, tokens, steps):
        logits, cache = self(tokens)
        for _ in range(steps):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, nxt], dim=1)
            logits, cache = self(nxt, cache)
        return tokens


class ViT(nn.Module):
    """ViT-B/16 at reduced width: 16x16 patches by a strided convolution, a class token,
    position embeddings, pre-norm encoder layers with GELU MLPs, a linear head."""

    def __init__(self, width=64, heads=4, layers=2, classes=10, image=32):
        super().__init__()
        self.patch = nn.Conv2d(3, width, 16, stride=16)
        self.cls = nn.Parameter(torch.randn(1, 1, width) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // 16) ** 2 + 1, width) * 0.02)
        self.layers = nn.ModuleList(nn.ModuleDict({
            "ln_1": nn.LayerNorm(width), "attn": Attention(width, heads, bias=True),
            "ln_2": nn.LayerNorm(width), "mlp": nn.Sequential(
                nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))})
            for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, images):
        x = self.patch(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for layer in self.layers:
            x = x + layer["attn"](layer["ln_1"](x))
            x = x + layer["mlp"](layer["ln_2"](x))
        return self.head(self.ln(x[:, 0]))


def euler_step(x, eps, sigma, sigma_next):
    """k-diffusion's Euler step: x + (x - denoised) / sigma * (sigma_next - sigma)."""
    denoised = x - eps * sigma
    return x + (x - denoised) / sigma * (sigma_next - sigma)


def ddim_step(x, eps, alpha, alpha_prev):
    pred_x0 = (x - (1 - alpha) ** 0.5 * eps) / alpha ** 0.5
    return alpha_prev ** 0.5 * pred_x0 + (1 - alpha_prev) ** 0.5 * eps


def pndm_step(x, eps_history, alpha, alpha_prev):
    """PNDM's linear multistep combination of the last four noise predictions, then the
    transfer step."""
    e = (55 * eps_history[-1] - 59 * eps_history[-2] + 37 * eps_history[-3]
         - 9 * eps_history[-4]) / 24
    coef = (alpha_prev / alpha) ** 0.5
    denom = alpha * (1 - alpha_prev) ** 0.5 + (alpha * (1 - alpha) * alpha_prev) ** 0.5
    return coef * x - (alpha_prev - alpha) * e / denom


class WrongKernels(TorchDispatchMode):
    """Planted bugs: a softmax without the max subtraction (exp in the input's dtype), a
    group_norm without eps. Entered outside mpsim.torch.check or record, whose mode then sees
    their outputs as the kernels'."""

    def __init__(self, which):
        super().__init__()
        self.which = which

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if self.which == "softmax" and name == "_softmax":
            e = torch.exp(args[0])  # float16: inf above 11.09; float32 above 88.7
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
