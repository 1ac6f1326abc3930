"""mpsim.fft: the real-valued functions of torch.fft. mpsim has no complex dtypes, so the
transforms themselves (fft, rfft, ...) are not here yet; fftshift and ifftshift, which only
rotate, are (exact)."""

from . import _C


def _dims(input, dim):
    if dim is None:
        return list(range(input.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None):
    """input rolled by n // 2 along each dim (None: every dim): the zero frequency centred."""
    dims = _dims(input, dim)
    if not dims:
        return input.clone()
    return _C.roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of fftshift: rolled by -(n // 2)."""
    dims = _dims(input, dim)
    if not dims:
        return input.clone()
    return _C.roll(input, [-(input.shape[d] // 2) for d in dims], dims)
