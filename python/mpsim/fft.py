"""mpsim.fft: torch.fft's functions under their torch names (docs/ops.md, "Fourier transforms").
Every transform runs in double and rounds each output once (Note [Fourier transforms] in
kernels_simd/fft.cc): fft, ifft, rfft, irfft, hfft, ihfft and their 2-d and n-d forms are the ops
`fft_<name>` (cpu, and mps for complex64/float32); fftshift and ifftshift only rotate (exact);
fftfreq and rfftfreq are torch's sample frequencies. stft and istft (mpsim.stft, mpsim.istft)
are built on them."""

import math
import warnings

import numpy as np

from . import _C

fft = _C.fft_fft
ifft = _C.fft_ifft
rfft = _C.fft_rfft
irfft = _C.fft_irfft
hfft = _C.fft_hfft
ihfft = _C.fft_ihfft
fft2 = _C.fft_fft2
ifft2 = _C.fft_ifft2
rfft2 = _C.fft_rfft2
irfft2 = _C.fft_irfft2
hfft2 = _C.fft_hfft2
ihfft2 = _C.fft_ihfft2
fftn = _C.fft_fftn
ifftn = _C.fft_ifftn
rfftn = _C.fft_rfftn
irfftn = _C.fft_irfftn
hfftn = _C.fft_hfftn
ihfftn = _C.fft_ihfftn


def _dims(input, dim):
    if dim is None:
        return list(range(input.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


def _roll(input, dim, sign):
    dims = _dims(input, dim)
    if not dims:
        return input.clone()
    n = input.dim()
    for d in dims:
        if not -n <= d < n:
            raise _C.ShapeError(f"[roll] dim {d} is out of range for a {n}-d tensor (expected "
                                f"{-n}..{n - 1})")
    dims = [d + n if d < 0 else d for d in dims]  # from the front: the same dims of the parts
    shifts = [sign * (input.shape[d] // 2) for d in dims]
    if not input.dtype.is_complex:
        return _C.roll(input, shifts, dims)
    # a complex tensor rolls as its [..., 2] parts
    return _C.view_as_complex(_C.roll(_C.view_as_real(input), shifts, dims).contiguous())


def fftshift(input, dim=None):
    """input rolled by n // 2 along each dim (None: every dim): the zero frequency centred."""
    return _roll(input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of fftshift: rolled by -(n // 2)."""
    return _roll(input, dim, -1)


def _frequencies(values, n, d, dtype, device):
    dtype = dtype or _C.float32
    return _C.tensor(np.asarray(values, dtype=np.float64) / (n * d), dtype=dtype).to(
        device or "cpu")


def fftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False):
    """The sample frequencies of fft of length n: [0, 1, ..., -(n // 2), ..., -1] / (d n),
    each computed in double and rounded once."""
    if n < 0:
        raise _C.InvalidArgumentError(f"[fft_fftfreq] n must be non-negative, got {n}")
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies(k, n, d, dtype, device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False):
    """The sample frequencies of rfft of length n: [0, 1, ..., n // 2] / (d n)."""
    if n < 0:
        raise _C.InvalidArgumentError(f"[fft_rfftfreq] n must be non-negative, got {n}")
    return _frequencies(np.arange(0, n // 2 + 1), n, d, dtype, device)


# ---- stft / istft ------------------------------------------------------------------------------
# Both run on the cpu in double and round once: the windowed frames (float32 products are exact in
# double), the transform (the fft ops above, in double) and istft's overlap-add and envelope
# division. An mps input takes the cpu path under the fallback policy (MPSIM_ENABLE_FALLBACK=1,
# mpsim.set_fallback_enabled), with a warning once per op, as the kernels' fallback does; without
# it, MPS's refusal.

_warned = set()


def _host(op, t):
    if t is None or t.device == "cpu":
        return t
    if not _C.fallback_enabled():
        raise _C.UnsupportedError(
            f"[{op}] the operator '{op}' is not supported on MPS (it runs in float64). Set "
            "MPSIM_ENABLE_FALLBACK=1 (or call mpsim.set_fallback_enabled(True)) to run it on "
            "the cpu instead")
    if op not in _warned:
        _warned.add(op)
        warnings.warn(f"mpsim warning: the operator '{op}' is not supported on mps; it falls "
                      "back to the cpu (this warning is shown once per op)")
    return t.to("cpu")


def _window(op, window, win_length, n_fft, dtype):
    """The window as float64 NumPy of length n_fft (a shorter one centred with zeros)."""
    if window is None:
        w = np.ones(win_length)
    else:
        if window.dim() != 1 or window.shape[0] != win_length:
            raise _C.InvalidArgumentError(
                f"[{op}] expected a 1D window tensor of size equal to win_length={win_length}, "
                f"but got window with size {list(window.shape)}")
        if window.dtype.is_complex:
            raise _C.DTypeError(f"[{op}] complex windows are not supported")
        w = window.to(_C.float64).numpy()
    left = (n_fft - win_length) // 2
    return np.pad(w, (left, n_fft - win_length - left))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """torch.stft: the transforms of the windowed frames of a 1-d or [B, L] signal, as
    [B?, n_fft // 2 + 1 (onesided) or n_fft, frames]; return_complex None or False: the real
    [..., 2] form (torch 1.13's deprecated default for real inputs)."""
    op = "stft"
    device = input.device
    x = _host(op, input)
    window = _host(op, window)
    if x.dim() not in (1, 2):
        raise _C.InvalidArgumentError(f"[{op}] expected a 1D or 2D tensor, but got a "
                                      f"{x.dim()}D tensor")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise _C.DTypeError(f"[{op}] expected a tensor of floating point or complex values, "
                            f"got {x.dtype}")
    batched = x.dim() == 2
    x2 = x if batched else x.reshape([1, -1])
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if center:
        from .nn import functional as F
        pad = n_fft // 2
        x2 = F.pad(x2.reshape([1] + list(x2.shape)), [pad, pad], mode=pad_mode).reshape(
            [x2.shape[0], -1])
    length = x2.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise _C.InvalidArgumentError(f"[{op}] expected 0 < n_fft < {length}, but got "
                                      f"n_fft={n_fft}")
    if hop <= 0:
        raise _C.InvalidArgumentError(f"[{op}] expected hop_length > 0, but got "
                                      f"hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise _C.InvalidArgumentError(f"[{op}] expected 0 < win_length <= n_fft, but got "
                                      f"win_length={win}")
    w = _window(op, window, win, n_fft, x.dtype)
    complex_input = x.dtype.is_complex
    signal = x2.to(_C.complex128 if complex_input else _C.float64).numpy()
    frames = 1 + (length - n_fft) // hop
    idx = np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]
    windowed = signal[:, idx] * w  # [B, frames, n_fft], exact products of float32 values
    if complex_input and onesided:
        raise _C.InvalidArgumentError(f"[{op}] Cannot have onesided output if window or input "
                                      "is complex")
    sided = (not complex_input) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    t = _C.tensor(windowed, dtype=_C.complex128 if complex_input else _C.float64)
    spec = _C.fft_rfft(t, norm=norm) if sided else _C.fft_fft(t, norm=norm)
    wide = x.dtype in (_C.float64, _C.complex128)
    spec = spec.transpose(1, 2).to(_C.complex128 if wide else _C.complex64)
    if not batched:
        spec = spec.reshape(list(spec.shape[1:]))
    if return_complex is False or (return_complex is None and not complex_input):
        spec = _C.view_as_real(spec)
    spec = spec.contiguous()
    return spec.to(device) if device != "cpu" else spec


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """torch.istft: the signal whose stft is input ([B?, freq, frames], complex or torch 1.13's
    real [..., 2] form), by inverse transforms, overlap-add and division by the window's squared
    envelope, all in double, rounded once."""
    op = "istft"
    device = input.device
    x = _host(op, input)
    window = _host(op, window)
    if not x.dtype.is_complex:
        if x.dim() >= 1 and x.shape[-1] == 2 and x.dtype.is_floating_point:
            x = _C.view_as_complex(x.contiguous())
        else:
            raise _C.DTypeError(f"[{op}] istft requires a complex-valued input tensor")
    if x.dim() not in (2, 3):
        raise _C.InvalidArgumentError(f"[{op}] expected a tensor with 2 or 3 dimensions of "
                                      f"complex values, but got {x.dim()}")
    batched = x.dim() == 3
    spec = x if batched else x.reshape([1] + list(x.shape))
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0 or hop > win:
        raise _C.InvalidArgumentError(f"[{op}] expected 0 < hop_length <= win_length")
    if win <= 0 or win > n_fft:
        raise _C.InvalidArgumentError(f"[{op}] expected 0 < win_length <= n_fft")
    fft_size, frames = spec.shape[1], spec.shape[2]
    sided = fft_size != n_fft if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        raise _C.InvalidArgumentError(
            f"[{op}] expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not sided and n_fft != fft_size:
        raise _C.InvalidArgumentError(
            f"[{op}] expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {fft_size}")
    if return_complex and sided:
        raise _C.InvalidArgumentError(f"[{op}] cannot have onesided output if window or input "
                                      "is complex")
    w = _window(op, window, win, n_fft, None)
    norm = "ortho" if normalized else "backward"
    frames_spec = spec.transpose(1, 2).to(_C.complex128)  # [B, frames, fft_size], exact
    if return_complex:
        y = _C.fft_ifft(frames_spec, norm=norm)
        parts = _C.view_as_real(y).numpy()
        y = parts[..., 0] + 1j * parts[..., 1]
    else:
        if not sided:
            frames_spec = frames_spec[..., : n_fft // 2 + 1]
        y = _C.fft_irfft(frames_spec, n=n_fft, norm=norm).numpy()
    y = y * w  # [B, frames, n_fft]
    total = n_fft + hop * (frames - 1)
    out = np.zeros((y.shape[0], total), dtype=y.dtype)
    envelope = np.zeros(total)
    for f in range(frames):
        out[:, f * hop: f * hop + n_fft] += y[:, f]
        envelope[f * hop: f * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    end = min(end, total)
    out, envelope = out[:, start:end], envelope[start:end]
    if envelope.size and np.abs(envelope).min() < 1e-11:
        raise _C.InvalidArgumentError(f"[{op}] window overlap add min: "
                                      f"{np.abs(envelope).min():g}")
    out = out / envelope
    if length is not None and out.shape[1] < length:
        out = np.pad(out, ((0, 0), (0, length - out.shape[1])))
    part = _C.float64 if x.dtype == _C.complex128 else _C.float32
    if return_complex:
        result = _C.complex(_C.tensor(out.real, dtype=_C.float64),
                            _C.tensor(out.imag, dtype=_C.float64)).to(
                                _C.complex128 if part == _C.float64 else _C.complex64)
    else:
        result = _C.tensor(out, dtype=part)
    if not batched:
        result = result.reshape(list(result.shape[1:]))
    return result.to(device) if device != "cpu" else result
