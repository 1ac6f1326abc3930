"""mpsim.special: torch.special's functions under their torch names (docs/ops.md, "Math
functions"). Each is an op of mpsim (the name in brackets where it differs), on cpu and mps."""

from . import _C

bessel_j0 = _C.special_bessel_j0
bessel_j1 = _C.special_bessel_j1
bessel_y0 = _C.special_bessel_y0
bessel_y1 = _C.special_bessel_y1
digamma = psi = _C.digamma
entr = _C.special_entr
erf = _C.erf
erfc = _C.erfc
erfcx = _C.special_erfcx
erfinv = _C.erfinv
exp2 = _C.exp2
expit = _C.sigmoid
expm1 = _C.expm1
gammaln = _C.lgamma
i0 = modified_bessel_i0 = _C.i0
i0e = _C.special_i0e
i1 = modified_bessel_i1 = _C.special_i1
i1e = _C.special_i1e
log1p = _C.log1p
log_ndtr = _C.special_log_ndtr
log_softmax = _C.log_softmax
logit = _C.logit
logsumexp = _C.logsumexp
ndtr = _C.special_ndtr
ndtri = _C.special_ndtri
sinc = _C.sinc
softmax = _C.softmax
spherical_bessel_j0 = _C.special_spherical_bessel_j0
