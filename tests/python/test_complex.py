"""Complex tensors and the Fourier family against torch 1.13 run in the same process: the complex
dtypes and their conversions, NumPy/DLPack interop, item and repr, view_as_real/view_as_complex
and the part views, complex/polar/angle/conj, mpsim.fft (every transform, fftfreq, fftshift),
stft/istft and linalg.eig/eigvals.

The oracle of a float32 (complex64) result is torch's float64 (complex128) result on the same
values. mpsim computes in double and rounds each output part once, so each part must be at least as
close to that oracle as torch's own float32 result is, and within half an ulp of it, up to
2^-40 max|exact| (the double-rounding margin, and parts that are zero only by symmetry). float64
results: within 1e-12 max|exact|. Bugs found are strict xfails whose reason gives the case."""

import warnings

import numpy as np
import pytest
import torch

import mpsim

RNG = np.random.default_rng(29)
pytestmark = pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")
MARGIN = 2.0**-40


def m(t):
    """torch tensor -> mpsim tensor of the same dtype and values."""
    return mpsim.from_dlpack(t.contiguous())


def mpsim_dtype(dtype):
    return getattr(mpsim, str(dtype).replace("torch.", ""))


def parts(a):
    """A NumPy array as float64 parts: [..., 2] (real, imaginary) when complex."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return np.stack([a.real, a.imag], -1).astype(np.float64)
    return a.astype(np.float64)


def host(t):
    """torch tensor -> NumPy, widening the dtypes NumPy lacks (exact)."""
    widen = {torch.complex32: torch.complex64, torch.bfloat16: torch.float32}
    return t.to(widen.get(t.dtype, t.dtype)).numpy()


def same(ours, theirs):
    """Same dtype, shape and values, bit for bit up to NaN payloads (-0.0 is not 0.0)."""
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "mpsim."), \
        (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    o, t = parts(ours.to("cpu").numpy()), parts(host(theirs))
    np.testing.assert_array_equal(o, t)
    np.testing.assert_array_equal(np.signbit(o), np.signbit(t))


def complex_values(dtype, *shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def magnitude(exact):
    """max |exact| over its finite elements (0 when none)."""
    mag = np.abs(exact.numpy())
    return float(np.where(np.isfinite(mag), mag, 0).max(initial=0))


def at_least_as_close(ours, exact, theirs):
    """ours (float32/complex64) is, part by part, no farther from exact (torch float64/complex128
    on the same values) than torch's float32 result theirs, up to MARGIN * max|exact|; where
    exact rounded to ours' dtype is not finite, ours equals it."""
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "mpsim."), \
        (ours.dtype, theirs.dtype)
    exact, theirs = exact.resolve_conj(), theirs.resolve_conj()
    o, e, t = parts(ours.to("cpu").numpy()), parts(exact.numpy()), parts(theirs.numpy())
    assert o.shape == e.shape == t.shape, (o.shape, e.shape)
    rounded = parts(exact.to(theirs.dtype).numpy())
    finite = np.isfinite(rounded)
    np.testing.assert_array_equal(o[~finite], rounded[~finite])
    ours_err, their_err = np.abs(o[finite] - e[finite]), np.abs(t[finite] - e[finite])
    scale = magnitude(exact)
    bad = ours_err > their_err + MARGIN * scale
    assert not bad.any(), (f"{bad.sum()} parts farther than torch's float32: ours "
                           f"{ours_err[bad][:4]}, torch {their_err[bad][:4]}, scale {scale}")
    # rounded once: no farther than half a unit in the last place of the rounded exact
    half_ulp = 0.5 * np.spacing(np.abs(rounded[finite]).astype(theirs.numpy().real.dtype))
    bad = ours_err > half_ulp.astype(np.float64) + MARGIN * scale
    assert not bad.any(), (f"{bad.sum()} parts not rounded once: ours {ours_err[bad][:4]}, "
                           f"half ulp {half_ulp[bad][:4]}, scale {scale}")


def close64(ours, exact, rel=1e-12):
    """ours (float64/complex128) within rel * max|exact| of exact (non-finite parts equal)."""
    assert str(ours.dtype) == str(exact.dtype).replace("torch.", "mpsim."), \
        (ours.dtype, exact.dtype)
    exact = exact.resolve_conj()
    o, e = parts(ours.to("cpu").numpy()), parts(exact.numpy())
    assert o.shape == e.shape, (o.shape, e.shape)
    finite = np.isfinite(e)
    np.testing.assert_array_equal(o[~finite], e[~finite])
    err, scale = np.abs(o[finite] - e[finite]), magnitude(exact)
    assert np.all(err <= rel * scale), (err.max(), scale)


# ---- dtypes, conversions, interop ---------------------------------------------------------------

def test_dtype_names_and_properties():
    assert mpsim.chalf is mpsim.complex32 and mpsim.cfloat is mpsim.complex64
    assert mpsim.cdouble is mpsim.complex128
    for name in ("complex32", "complex64", "complex128", "float32", "int64", "bool"):
        ours, theirs = getattr(mpsim, name), getattr(torch, name)
        assert ours.is_complex == theirs.is_complex, name
        assert ours.is_floating_point == theirs.is_floating_point, name
        assert ours.is_signed == theirs.is_signed, name
        assert ours.itemsize == torch.empty(0, dtype=theirs).element_size(), name
        assert str(ours) == f"mpsim.{name}"
    x = mpsim.zeros(2, 3, dtype=mpsim.complex64)
    assert x.dtype.is_complex and x.shape == (2, 3) and x.stride() == (3, 1)
    assert not mpsim.zeros(1).dtype.is_complex


SPECIAL = [0.0, -0.0, 1.5, -2.25, 0.1, float("nan"), float("inf"), -float("inf"), 1e30, 3.4e38,
           1e-40, 65504.0, 70000.0, 1e-8]
REAL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
               torch.float16, torch.bfloat16, torch.float32, torch.float64]
COMPLEX_DTYPES = [torch.complex32, torch.complex64, torch.complex128]


@pytest.mark.parametrize("source", REAL_DTYPES, ids=str)
def test_real_to_complex_keeps_the_value_with_a_positive_zero_imaginary_part(source):
    if source.is_floating_point:
        t = torch.tensor(SPECIAL, dtype=torch.float64).to(source)
    elif source == torch.bool:
        t = torch.tensor([True, False, True])
    else:
        info = torch.iinfo(source)
        t = torch.tensor([0, 1, -1, 7, info.min, info.max, info.max - 1], dtype=torch.int64)
        t = t.clamp(info.min, info.max).to(source)
    x = m(t)
    for target in COMPLEX_DTYPES:
        same(x.to(mpsim_dtype(target)), t.to(target))
    narrow = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.float16, torch.bfloat16,
              torch.float32]
    if source in narrow:  # and back exactly: complex64's parts hold every value
        same(x.to(mpsim.complex64).real.to(x.dtype), t)
    if source in narrow + [torch.int32, torch.float64]:
        same(x.to(mpsim.complex128).real.to(x.dtype), t)
    same(x.chalf(), t.to(torch.complex32))
    same(x.cfloat(), t.cfloat())
    same(x.cdouble(), t.cdouble())


def test_int64_to_complex_rounds_as_torch():
    t = torch.tensor([2**24 + 1, 2**24 + 3, -(2**24 + 3), 2**53 + 1, 2**62 + 2**38 + 1,
                      -(2**63), 2**63 - 1, 3 * (2**25) + 1], dtype=torch.int64)
    same(m(t).to(mpsim.complex64), t.to(torch.complex64))
    same(m(t).to(mpsim.complex128), t.to(torch.complex128))


def test_complex128_to_complex64_rounds_each_part_as_torch():
    re = [1 + 2.0**-30, 1e39, -1e39, 1e-46, -1e-46, 1.5 * 2.0**-149, -0.0, float("nan"),
          float("inf"), 3.4028235e38 * (1 + 2.0**-25), 0.1, 2.0**-126 * (1 - 2.0**-30)]
    im = re[::-1]
    t = torch.complex(torch.tensor(re, dtype=torch.float64), torch.tensor(im, dtype=torch.float64))
    x = m(t)
    same(x.to(mpsim.complex64), t.to(torch.complex64))
    same(x.to(mpsim.complex32), t.to(torch.complex32))
    same(x.to(mpsim.complex64).to(mpsim.complex128), t.to(torch.complex64).to(torch.complex128))


def complex_specials(dtype=torch.complex128):
    re = torch.tensor([0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), 0.0, 1e-45, 0.0, -7.5],
                      dtype=torch.float64)
    im = torch.tensor([-0.0, 0.0, 0.5, float("nan"), 0.0, 1.0, float("inf"), 0.0, 1e-300, 0.0],
                      dtype=torch.float64)
    return torch.complex(re, im).to(dtype)


@pytest.mark.parametrize("source", [torch.complex64, torch.complex128], ids=str)
def test_complex_to_real_refuses_to_drop_the_imaginary_part_and_to_bool_tests_both_parts(source):
    """torch's complex -> real conversion warns and keeps the real part; mpsim refuses it (an op
    that converts its input would otherwise compute on the real part alone) and points at x.real,
    whose conversion is torch's."""
    t = complex_specials(source)
    x = m(t)
    with warnings.catch_warnings():  # torch: casting complex values to real discards the imag
        warnings.simplefilter("ignore")
        for target in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int64):
            with pytest.raises(mpsim.DTypeError, match=r"imaginary part.*x\.real"):
                x.to(mpsim_dtype(target))
            with pytest.raises(mpsim.DTypeError, match="imaginary part"):
                mpsim.zeros(t.shape, dtype=mpsim_dtype(target)).copy_(x)
            if target != torch.int64:
                same(x.real.to(mpsim_dtype(target)), t.to(target))
        # either part nonzero (NaN is nonzero), as NumPy and torch's t != 0; torch 1.13's
        # t.to(torch.bool) looks at the real part alone
        same(x.to(mpsim.bool), t != 0)
        np.testing.assert_array_equal(x.to(mpsim.bool).numpy(), t.numpy().astype(bool))
        finite = torch.complex(torch.tensor([0.0, -0.0, 1.5, 100.7, 7.9, 126.0]),
                               torch.tensor([3.0, -1.0, 0.0, 1e30, float("nan"), 2.0])).to(source)
        for target in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
            same(m(finite).real.to(mpsim_dtype(target)), finite.to(target))
            if target != torch.uint8:  # negative to uint8 is undefined in C++
                same((-m(finite)).real.to(mpsim_dtype(target)), (-finite).to(target))


def test_numpy_round_trips_bit_for_bit():
    for dtype in (np.complex64, np.complex128):
        a = complex_specials().numpy().astype(dtype).reshape(2, 5)
        x = mpsim.tensor(a)
        assert x.dtype is (mpsim.complex64 if dtype == np.complex64 else mpsim.complex128)
        assert x.shape == (2, 5)
        back = x.numpy()
        assert back.dtype == dtype and back.tobytes() == a.tobytes()
        strided = a[:, ::2]  # a non-contiguous array
        assert mpsim.tensor(strided).numpy().tobytes() == np.ascontiguousarray(strided).tobytes()
        same(mpsim.tensor(a.T), torch.from_numpy(np.ascontiguousarray(a.T)))


def test_dlpack_round_trips_and_keeps_strides():
    for dtype in (torch.complex64, torch.complex128):
        t = torch.from_numpy(complex_values(np.complex128, 3, 4)).to(dtype)
        x = mpsim.from_dlpack(t)
        same(x, t)
        back = torch.from_dlpack(x)
        assert back.dtype == dtype and torch.equal(back, t)
        same(mpsim.from_dlpack(t.T), t.T)  # a transposed view
        same(mpsim.from_dlpack(t[:, ::2]), t[:, ::2])


def test_item_gives_a_python_complex():
    for dtype in (torch.complex64, torch.complex128):
        t = torch.tensor([[0.1 + 0.2j]], dtype=dtype)
        got = m(t).item()
        assert type(got) is complex and got == t.item()
        assert m(t)[0, 0].item() == t[0, 0].item()
    t = torch.complex(torch.tensor([float("nan")]), torch.tensor([-0.0]))
    got = m(t).item()
    assert np.isnan(got.real) and np.signbit(got.imag)
    with pytest.raises(mpsim.Error):
        m(torch.zeros(2, dtype=torch.complex64)).item()


REPR_CASES = [
    [1 + 2j, 3 - 4j],
    [[1.5 + 0.25j, -2 + 8j], [0.125 - 1j, 4 + 0j]],
    [1e10 + 1j, 2],
    [1e-5 + 1j],
    [1 + 2j, -30 - 4j],
    [float("nan") + 1j, float("inf") - 2j],
]


@pytest.mark.parametrize("values", REPR_CASES, ids=range(len(REPR_CASES)))
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_repr_is_torchs(values, dtype):
    t = torch.tensor(values, dtype=dtype)
    assert repr(m(t)) == repr(t).replace("torch.", "")
    assert repr(m(t[0])) == repr(t[0]).replace("torch.", "")  # 0-d or a row


def test_repr_formats_real_and_imaginary_parts_with_separate_widths():
    for values in ([1 + 200j, 3 - 4j], [-1 - 1j, 10 + 10j], [0.001 + 1j, 123.4567j]):
        t = torch.tensor(values, dtype=torch.complex64)
        assert repr(m(t)) == repr(t)


def test_repr_of_integer_valued_parts_with_a_wide_range_is_scientific():
    for values in ([1 + 1j, 2000 + 1j], [1 + 1j, 1 + 2000j], [1 + 1j, 1e8 + 0j]):
        t = torch.tensor(values, dtype=torch.complex64)
        assert repr(m(t)) == repr(t)
    for values in ([1.0, 2000.0], [1.0, 999.0], [0.0, 1.0, 1001.0], [3.0, 1e9], [-5.0, 5e3]):
        t = torch.tensor(values)
        assert repr(m(t)) == repr(t)


def test_repr_of_an_empty_complex64_tensor_names_the_dtype():
    t = torch.zeros(0, 3, dtype=torch.complex64)
    assert repr(m(t)) == repr(t).replace("torch.", "")


def test_item_of_a_complex64_tensor_on_mps():
    x = m(torch.tensor([1 + 2j, 3 - 4j])).to("mps")
    assert x[0].item() == 1 + 2j


def test_repr_of_a_complex64_tensor_on_mps():
    x = m(torch.tensor([1 + 2j, 3 - 4j])).to("mps")
    assert repr(x) == "tensor([1.+2.j, 3.-4.j], device='mps:0')"


def test_complex64_on_mps_gives_cpus_bits():
    t = torch.cat([complex_specials(torch.complex64),
                   torch.from_numpy(complex_values(np.complex64, 6))])
    x = m(t)
    d = x.to("mps")
    assert d.device == "mps" and d.dtype is mpsim.complex64
    for fn in (lambda v: v, mpsim.view_as_real, mpsim.real, mpsim.imag, mpsim.conj,
               mpsim.conj_physical, mpsim.angle, mpsim.isreal, lambda v: v.real.to(mpsim.float16),
               lambda v: v.to(mpsim.bool), lambda v: v.real.to(mpsim.complex64),
               lambda v: mpsim.complex(v.real, v.imag), lambda v: mpsim.polar(v.real, v.imag),
               lambda v: mpsim.view_as_complex(mpsim.view_as_real(v))):
        cpu, dev = fn(x), fn(d)
        assert dev.device == "mps" and dev.dtype == cpu.dtype
        assert dev.to("cpu").numpy().tobytes() == cpu.numpy().tobytes()
    same(d.to("cpu"), t)


# ---- views: view_as_real, view_as_complex, real, imag ------------------------------------------

def test_view_as_real_and_view_as_complex_share_storage():
    t = torch.from_numpy(complex_values(np.complex64, 2, 3))
    x = m(t)
    r = mpsim.view_as_real(x)
    same(r, torch.view_as_real(t))
    assert r.stride() == (6, 2, 1)
    r[0, 1, 1] = 9.0  # write through the real view
    t[0, 1] = complex(t[0, 1].real, 9.0)
    same(x, t)
    x[1, 2] = -2 - 0.5j  # write through the complex tensor
    t[1, 2] = -2 - 0.5j
    same(r, torch.view_as_real(t))
    c = mpsim.view_as_complex(r)
    c[0, 0] = 5 + 6j
    t[0, 0] = 5 + 6j
    same(x, t)
    same(r, torch.view_as_real(t))
    for part, attr in ((mpsim.real, "real"), (mpsim.imag, "imag")):
        v = part(x)
        same(v, getattr(t, attr))
        same(getattr(x, attr), getattr(t, attr))
        assert v.stride() == getattr(t, attr).stride()
        v.fill_(0.75)  # the part views write through too
        getattr(t, attr).fill_(0.75)
        same(x, t)


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64], ids=str)
def test_view_as_complex_of_each_float_dtype(dtype):
    t = torch.from_numpy(RNG.standard_normal((4, 3, 2))).to(dtype)
    same(mpsim.view_as_complex(m(t)), torch.view_as_complex(t))
    same(mpsim.view_as_complex(m(t)[1:3]), torch.view_as_complex(t[1:3]))  # an even offset
    same(mpsim.view_as_complex(m(t)[::2]), torch.view_as_complex(t[::2]))
    same(mpsim.view_as_complex(m(t)[:0]), torch.view_as_complex(t[:0]))
    same(mpsim.view_as_real(mpsim.view_as_complex(m(t)[:0])), t[:0])


def test_view_as_real_of_non_contiguous_complex_tensors():
    t = torch.from_numpy(complex_values(np.complex128, 3, 4))
    x = m(t)
    for ours, theirs in ((x.T, t.T), (x[:, 1::2], t[:, 1::2]), (x[1], t[1]), (x[1, 2], t[1, 2])):
        r = mpsim.view_as_real(ours)
        same(r, torch.view_as_real(theirs))
        assert r.stride() == torch.view_as_real(theirs).stride()
        same(mpsim.view_as_real(ours).contiguous(), torch.view_as_real(theirs).contiguous())
        same(ours.real, theirs.real)
        same(ours.imag, theirs.imag)
    rt = mpsim.view_as_real(x.T)
    rt[0, 2, 0] = 4.5  # x.T[0, 2] is x[2, 0]
    t[2, 0] = complex(4.5, t[2, 0].imag)
    same(x, t)


@pytest.mark.parametrize("make", [
    lambda: mpsim.zeros(3, 3),  # last dim not 2
    lambda: mpsim.zeros(2, 3).T,  # last stride not 1
    lambda: mpsim.zeros(3, 3)[:, :2],  # an odd stride
    lambda: mpsim.zeros(3, 4)[:, 1:3],  # an odd offset
    lambda: mpsim.zeros(()),  # 0-d
    lambda: mpsim.zeros(3, 2, dtype=mpsim.int32),
    lambda: mpsim.zeros(3, 2, dtype=mpsim.bfloat16),
    lambda: mpsim.zeros(3, 2, dtype=mpsim.complex64),
], ids=["size3", "stride", "odd-stride", "odd-offset", "0d", "int32", "bfloat16", "complex"])
def test_view_as_complex_refusals(make):
    with pytest.raises(mpsim.Error):
        mpsim.view_as_complex(make())


def test_view_as_real_imag_and_conj_of_real_tensors():
    for dtype in (mpsim.float32, mpsim.int64, mpsim.bool):
        with pytest.raises(mpsim.Error):
            mpsim.view_as_real(mpsim.zeros(2, dtype=dtype))
        with pytest.raises(mpsim.Error):
            mpsim.imag(mpsim.zeros(2, dtype=dtype))
        with pytest.raises(mpsim.Error):
            mpsim.zeros(2, dtype=dtype).imag
    a = mpsim.zeros(3)
    a.real.fill_(2.0)  # real of a real tensor is the tensor itself
    mpsim.conj(a).fill_(3.0)  # so is conj
    same(a, torch.full((3,), 3.0))
    mpsim.conj_physical(a).fill_(4.0)  # conj_physical copies
    same(a, torch.full((3,), 3.0))


# ---- conj, angle, isreal, complex, polar --------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_conj_angle_and_isreal(dtype):
    t = torch.cat([complex_specials(dtype), torch.from_numpy(complex_values(np.complex128, 7)).to(
        dtype)])
    x = m(t)
    c = mpsim.conj(x)
    same(c, torch.conj(t).resolve_conj())
    c.fill_(1.0)  # a copy: the input is unchanged
    same(x, t)
    same(mpsim.conj_physical(x), torch.conj_physical(t))
    same(mpsim.conj(x[::3]), torch.conj(t[::3]).resolve_conj())
    same(mpsim.isreal(x), torch.isreal(t))
    ours = mpsim.angle(x)
    if dtype == torch.complex64:
        at_least_as_close(ours, torch.angle(t.to(torch.complex128)), torch.angle(t))
    else:  # within an ulp of torch's atan2
        theirs = torch.angle(t).numpy()
        assert ours.dtype is mpsim.float64
        np.testing.assert_array_equal(np.isnan(ours.numpy()), np.isnan(theirs))
        assert np.all(np.abs(ours.numpy() - theirs) <= np.spacing(np.abs(theirs)),
                      where=~np.isnan(theirs))
    for real in (torch.tensor([1.0, -2.0, 0.0, float("nan")]), torch.tensor([3, -1, 0])):
        same(mpsim.isreal(m(real)), torch.isreal(real))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64], ids=str)
def test_complex_builds_from_parts_with_broadcast(dtype):
    re = torch.from_numpy(RNG.standard_normal((3, 1, 4))).to(dtype)
    im = torch.from_numpy(RNG.standard_normal((5, 1))).to(dtype)
    same(mpsim.complex(m(re), m(im)), torch.complex(re, im))
    sp = torch.tensor(SPECIAL, dtype=torch.float64).to(dtype)
    same(mpsim.complex(m(sp), m(sp.flip(0))), torch.complex(sp, sp.flip(0)))
    same(mpsim.complex(m(re[:0]), m(re[:0])), torch.complex(re[:0], re[:0]))
    rt = re.permute(2, 1, 0)  # a strided view
    same(mpsim.complex(m(re).permute([2, 1, 0]), m(re).permute([2, 1, 0])), torch.complex(rt, rt))


def test_complex_refusals():
    f32, f64 = mpsim.zeros(3), mpsim.zeros(3, dtype=mpsim.float64)
    i32, i64 = mpsim.zeros(3, dtype=mpsim.int32), mpsim.zeros(3, dtype=mpsim.int64)
    c64 = mpsim.zeros(3, dtype=mpsim.complex64)
    for re, im in ((f32, f64), (i64, i64), (i32, f32), (f32, i32), (c64, c64)):
        with pytest.raises(mpsim.Error):
            mpsim.complex(re, im)
        with pytest.raises(mpsim.Error):
            mpsim.polar(re, im)
    with pytest.raises(mpsim.Error):
        mpsim.complex(mpsim.zeros(3), mpsim.zeros(4))
    with pytest.raises(mpsim.Error):
        mpsim.polar(mpsim.zeros(2, 3), mpsim.zeros(2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_polar_vs_torch(dtype):
    r = torch.from_numpy(RNG.uniform(0, 10, (4, 1, 6))).to(dtype)
    theta = torch.from_numpy(RNG.uniform(-20, 20, (5, 6))).to(dtype)
    r[0, 0, :3] = torch.tensor([0.0, float("inf"), 1e30])
    theta[0, :3] = torch.tensor([1.0, 0.0, 3.0])
    ours = mpsim.polar(m(r), m(theta))
    exact = torch.polar(r.double(), theta.double())
    if dtype == torch.float32:
        at_least_as_close(ours, exact, torch.polar(r, theta))
    else:
        close64(ours, exact, rel=2**-52)
    same(mpsim.polar(m(r[:0]), m(theta[:0])), torch.polar(r[:0], theta[:0]))
    rt, tt = r.double().expand(4, 5, 6).transpose(1, 2), theta.double().T  # strided views
    close64(mpsim.polar(m(r.double()).expand([4, 5, 6]).transpose(1, 2), m(theta.double()).T),
            torch.polar(rt, tt), rel=2**-52)


# ---- the fft family -----------------------------------------------------------------------------
# (function, input shape, keyword arguments, complex input)

FFT_CASES = [
    ("fft", (17,), {}, False),
    ("fft", (31,), {"norm": "ortho"}, True),
    ("fft", (1000,), {"norm": "forward"}, True),
    ("fft", (4096,), {}, True),
    ("fft", (3, 16), {"n": 24, "dim": 0}, True),
    ("fft", (5, 64), {"n": 20}, False),
    ("fft", (1,), {}, True),
    ("fft", (1009,), {}, True),
    ("ifft", (17,), {}, True),
    ("ifft", (2, 1000), {"norm": "ortho"}, False),
    ("ifft", (4096,), {"n": 31, "norm": "forward"}, True),
    ("ifft", (6, 9), {"n": 16, "dim": -2}, True),
    ("rfft", (17,), {}, False),
    ("rfft", (4096,), {"norm": "ortho"}, False),
    ("rfft", (3, 1000), {"n": 31, "norm": "forward"}, False),
    ("rfft", (10, 7), {"n": 12, "dim": 0}, False),
    ("rfft", (2,), {}, False),
    ("rfft", (2, 4099), {}, False),
    ("irfft", (9,), {}, True),
    ("irfft", (17,), {"n": 31}, True),
    ("irfft", (3, 513), {"norm": "ortho"}, True),
    ("irfft", (4, 10), {"n": 6, "norm": "forward"}, True),
    ("irfft", (9, 3), {"n": 17, "dim": 0}, True),
    ("irfft", (16,), {}, False),
    ("hfft", (9,), {}, True),
    ("hfft", (16,), {"n": 31, "norm": "ortho"}, True),
    ("hfft", (3, 501), {"n": 1000, "norm": "forward"}, True),
    ("hfft", (7, 4), {"n": 8, "dim": 0}, True),
    ("ihfft", (17,), {}, False),
    ("ihfft", (1000,), {"norm": "ortho"}, False),
    ("ihfft", (3, 31), {"n": 40, "norm": "forward"}, False),
    ("ihfft", (12, 5), {"n": 7, "dim": 0}, False),
    ("fft2", (17, 31), {}, True),
    ("fft2", (3, 8, 16), {"s": (10, 20)}, False),
    ("fft2", (4, 5, 6), {"dim": (0, 2), "norm": "ortho"}, True),
    ("ifft2", (17, 31), {"norm": "forward"}, True),
    ("ifft2", (2, 64, 63), {"s": (31, 17)}, True),
    ("rfft2", (17, 31), {}, False),
    ("rfft2", (2, 64, 63), {"s": (31, 17), "norm": "forward"}, False),
    ("rfft2", (6, 3, 5), {"dim": (0, 1), "norm": "ortho"}, False),
    ("irfft2", (17, 16), {}, True),
    ("irfft2", (2, 9, 9), {"s": (17, 16), "norm": "ortho"}, True),
    ("hfft2", (17, 16), {}, True),
    ("hfft2", (5, 9), {"s": (6, 15), "norm": "forward"}, True),
    ("ihfft2", (17, 31), {}, False),
    ("ihfft2", (3, 8, 9), {"s": (8, 5), "norm": "ortho"}, False),
    ("fftn", (4, 5, 6), {}, True),
    ("fftn", (2, 17, 31), {"s": (3, 40), "dim": (0, 2), "norm": "ortho"}, True),
    ("fftn", (64, 64), {}, False),
    ("fftn", (3, 4, 5), {"s": (7, 2)}, True),
    ("ifftn", (4, 5, 6), {"norm": "forward"}, True),
    ("ifftn", (3, 1000), {"dim": (-1,)}, True),
    ("rfftn", (5, 6, 7), {}, False),
    ("rfftn", (5, 6, 7), {"s": (8, 9, 10), "norm": "ortho"}, False),
    ("rfftn", (4, 31), {"dim": (1, 0)}, False),
    ("irfftn", (4, 5, 6), {}, True),
    ("irfftn", (4, 5, 6), {"s": (4, 5, 11), "norm": "forward"}, True),
    ("hfftn", (4, 5, 6), {}, True),
    ("hfftn", (3, 17), {"s": (5, 31), "norm": "ortho"}, True),
    ("ihfftn", (5, 6, 7), {}, False),
    ("ihfftn", (5, 6, 7), {"s": (3, 12), "dim": (0, 2), "norm": "forward"}, False),
]


def fft_input(shape, is_complex, dtype):
    """torch input of the case: float32/complex64 values, or full float64/complex128 ones."""
    wide = dtype == torch.float64
    if is_complex:
        values = complex_values(np.complex128 if wide else np.complex64, *shape)
        return torch.from_numpy(values)
    return torch.from_numpy(RNG.standard_normal(shape).astype(np.float64 if wide else np.float32))


def check_transform(name, t, ours, **kwargs):
    """ours (mpsim's result on t) against torch.fft.<name> of t."""
    fn = getattr(torch.fft, name)
    if t.dtype in (torch.float64, torch.complex128):
        close64(ours, fn(t, **kwargs))
    else:
        wide = t.to(torch.complex128 if t.is_complex() else torch.float64)
        at_least_as_close(ours, fn(wide, **kwargs), fn(t, **kwargs))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name,shape,kwargs,is_complex", FFT_CASES,
                         ids=[f"{c[0]}-{'x'.join(map(str, c[1]))}-{i}"
                              for i, c in enumerate(FFT_CASES)])
def test_fft_vs_torch(name, shape, kwargs, is_complex, dtype):
    t = fft_input(shape, is_complex, dtype)
    check_transform(name, t, getattr(mpsim.fft, name)(m(t), **kwargs), **kwargs)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "fft2", "rfftn", "hfft",
                                  "irfft2", "ifftn"])
def test_fft_of_non_contiguous_views(name):
    is_complex = name in ("fft", "ifft", "hfft", "irfft2", "ifftn")
    t = fft_input((12, 9), is_complex, torch.float32)
    x = m(t)
    views = [(x.T, t.T), (x[::2, 1::3], t[::2, 1::3])]
    if name in ("fft", "ifft", "rfft", "ihfft", "hfft"):
        views.append((x[3], t[3]))  # a row at an offset
    for ours, theirs in views:
        check_transform(name, theirs, getattr(mpsim.fft, name)(ours))
    check_transform(name, t.T, getattr(mpsim.fft, name)(x.T, dim=0), dim=0)


@pytest.mark.parametrize("name,shape,kwargs", [
    ("fft", (0, 8), {}), ("rfft", (2, 0, 9), {}), ("irfft", (0, 5), {"n": 8}),
    ("fft2", (0, 4, 4), {}), ("rfftn", (3, 0, 4, 6), {"dim": (2, 3)}), ("hfft", (0, 5), {}),
    ("ihfft2", (0, 3, 4), {}), ("ifftn", (0, 7), {"dim": (1,)}),
])
def test_fft_with_empty_batch_dims(name, shape, kwargs):
    is_complex = name in ("fft", "irfft", "fft2", "hfft", "ifftn")
    t = fft_input(shape, is_complex, torch.float32)
    same(getattr(mpsim.fft, name)(m(t), **kwargs), getattr(torch.fft, name)(t, **kwargs))


@pytest.mark.parametrize("call", [
    lambda x, c: mpsim.fft.fft(c, n=0),
    lambda x, c: mpsim.fft.rfft(x, n=0),
    lambda x, c: mpsim.fft.irfft(c, n=0),
    lambda x, c: mpsim.fft.fft(c, n=-1),
    lambda x, c: mpsim.fft.irfft(c, n=-1),
    lambda x, c: mpsim.fft.fftn(c, s=(4, 0)),
    lambda x, c: mpsim.fft.fftn(c, dim=(0, 0)),
    lambda x, c: mpsim.fft.fft2(c, dim=(1, -1)),
    lambda x, c: mpsim.fft.rfftn(x, dim=(1, 1)),
    lambda x, c: mpsim.fft.fft(c, norm="bad"),
    lambda x, c: mpsim.fft.ihfft(x, norm="orthogonal"),
    lambda x, c: mpsim.fft.rfft(c),
    lambda x, c: mpsim.fft.ihfft(c),
    lambda x, c: mpsim.fft.rfft2(c),
    lambda x, c: mpsim.fft.fft(x.to(mpsim.float16)),
    lambda x, c: mpsim.fft.rfft(x.to(mpsim.float16)),
    lambda x, c: mpsim.fft.fft(c.to(mpsim.complex32)),
    lambda x, c: mpsim.fft.fft(c, dim=2),
    lambda x, c: mpsim.fft.rfft(x, dim=-3),
    lambda x, c: mpsim.fft.fftn(c, dim=(0, 5)),
    lambda x, c: mpsim.fft.fftn(c, s=(2, 3, 4, 5)),
    lambda x, c: mpsim.fft.fftn(c, s=(4, 4), dim=(0,)),
    lambda x, c: mpsim.fft.fft(mpsim.zeros(())),
    lambda x, c: mpsim.fft.irfft(mpsim.zeros(1, dtype=mpsim.complex64)),
])
def test_fft_refusals(call):
    x = mpsim.tensor(RNG.standard_normal((4, 6)).astype(np.float32))
    c = x.to(mpsim.complex64)
    with pytest.raises(mpsim.Error):
        call(x, c)


@pytest.mark.parametrize("name", ["fft", "rfft", "ihfft", "fft2", "rfftn", "irfft", "hfft",
                                  "ifftn"])
def test_fft_of_integer_and_bool_inputs_transforms_them_as_float32(name):
    t = torch.from_numpy(RNG.integers(-50, 50, (3, 17)).astype(np.int32))
    for source in (t, t.to(torch.int64), t > 0):
        check_transform(name, source.float(), getattr(mpsim.fft, name)(m(source)))


def test_refusals_are_the_python_kinds_of_their_cause():
    c = mpsim.zeros(4, dtype=mpsim.complex64)
    assert issubclass(mpsim.Error, RuntimeError)
    cases = [
        (TypeError, lambda: mpsim.fft.rfft(c)),
        (TypeError, lambda: mpsim.fft.fft(c.to(mpsim.complex128).to(mpsim.float16))),
        (TypeError, lambda: mpsim.view_as_complex(mpsim.zeros(3, 2, dtype=mpsim.int32))),
        (TypeError, lambda: mpsim.imag(mpsim.zeros(2))),
        (TypeError, lambda: mpsim.complex(mpsim.zeros(2), mpsim.zeros(2, dtype=mpsim.float64))),
        (ValueError, lambda: mpsim.fft.fft(c, n=0)),
        (ValueError, lambda: mpsim.fft.fft(c, norm="bad")),
        (ValueError, lambda: mpsim.fft.fft(c, dim=1)),
        (ValueError, lambda: mpsim.view_as_complex(mpsim.zeros(3, 3))),
        (ValueError, lambda: mpsim.linalg.eig(mpsim.zeros(2, 3))),
    ]
    for kind, call in cases:
        with pytest.raises(mpsim.Error) as info:
            call()
        assert isinstance(info.value, kind), (kind, info.value)


@pytest.mark.parametrize("n,d", [(1, 1.0), (8, 1.0), (9, 0.1), (17, 2.5), (1000, 1e-3)])
def test_fftfreq_rfftfreq_and_shifts(n, d):
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(mpsim.fft, name)(n, d)
        at_least_as_close(ours, getattr(torch.fft, name)(n, d, dtype=torch.float64),
                          getattr(torch.fft, name)(n, d))
        close64(getattr(mpsim.fft, name)(n, d, dtype=mpsim.float64),
                getattr(torch.fft, name)(n, d, dtype=torch.float64), rel=2**-53)
    t = torch.from_numpy(complex_values(np.complex64, 3, n))
    for dim in (None, 0, 1, (0, 1), (-1,)):
        kw = {} if dim is None else {"dim": dim}
        same(mpsim.fft.fftshift(m(t), **kw), torch.fft.fftshift(t, **kw))
        same(mpsim.fft.ifftshift(m(t), **kw), torch.fft.ifftshift(t, **kw))
    same(mpsim.fft.ifftshift(mpsim.fft.fftshift(m(t))), t)


def test_fft_on_mps_gives_cpus_bits():
    t = torch.from_numpy(complex_values(np.complex64, 4, 1000))
    r = torch.from_numpy(RNG.standard_normal((4, 31)).astype(np.float32))
    x, y = m(t), m(r)
    for fn, arg, kw in ((mpsim.fft.fft, x, {}), (mpsim.fft.ifft, x, {"norm": "ortho"}),
                        (mpsim.fft.fftn, x, {}), (mpsim.fft.fft2, x, {"s": (5, 17)}),
                        (mpsim.fft.rfft, y, {}), (mpsim.fft.irfft, x, {"n": 17}),
                        (mpsim.fft.hfft, x, {}), (mpsim.fft.ihfft, y, {"norm": "forward"}),
                        (mpsim.fft.rfftn, y, {}), (mpsim.fft.irfftn, x, {})):
        cpu = fn(arg, **kw)
        dev = fn(arg.to("mps"), **kw)
        assert dev.device == "mps" and dev.dtype == cpu.dtype
        assert dev.to("cpu").numpy().tobytes() == cpu.numpy().tobytes(), fn
    with pytest.raises(mpsim.Error, match="MPS"):
        x.to(mpsim.complex128).to("mps")
    with pytest.raises(mpsim.Error, match="MPS"):
        x.to("mps").to(mpsim.complex128)
    with pytest.raises(mpsim.Error, match="MPS"):
        y.to(mpsim.float64).to("mps")


def test_fft_is_bit_identical_for_any_thread_count():
    t = torch.from_numpy(complex_values(np.complex64, 64, 1000))
    r = torch.from_numpy(RNG.standard_normal((64, 1000)).astype(np.float32))
    n = mpsim.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 4):
            mpsim.set_num_threads(threads)
            results.append((mpsim.fft.fftn(m(t)).numpy().tobytes(),
                            mpsim.fft.rfftn(m(r)).numpy().tobytes(),
                            mpsim.fft.ifft(m(t), dim=0).numpy().tobytes()))
    finally:
        mpsim.set_num_threads(n)
    assert results[0] == results[1] == results[2]


# ---- stft / istft -------------------------------------------------------------------------------

STFT_CASES = [
    dict(n_fft=16, return_complex=True),
    dict(n_fft=16, hop_length=3, window="hann", return_complex=True),
    dict(n_fft=31, hop_length=7, win_length=20, window="hann", center=False, return_complex=True),
    dict(n_fft=64, hop_length=16, window="hamming", normalized=True, return_complex=True),
    dict(n_fft=20, hop_length=5, window="hann", onesided=False, return_complex=True),
    dict(n_fft=32, hop_length=8, window="hann", pad_mode="constant", return_complex=True),
    dict(n_fft=17, hop_length=4, win_length=9, return_complex=False),
    dict(n_fft=128, window="hann", return_complex=True),
]


def windowed(kwargs):
    """The keyword arguments with a named window made (periodic, as torch's, in float32), and
    the same with that window widened to float64 (exact)."""
    kw = dict(kwargs)
    win = kw.get("win_length") or kw["n_fft"]
    maker = {"hann": torch.hann_window, "hamming": torch.hamming_window}
    if "window" in kw:
        kw["window"] = maker[kw["window"]](win)
    return kw, {k: v.double() if isinstance(v, torch.Tensor) else v for k, v in kw.items()}


def stft_both(x, kw):
    """The signal and keyword arguments as mpsim tensors."""
    return m(x), {k: m(v) if isinstance(v, torch.Tensor) else v for k, v in kw.items()}


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("kwargs", STFT_CASES, ids=range(len(STFT_CASES)))
def test_stft_vs_torch(kwargs, batched):
    shape = (3, 300) if batched else (257,)
    x = torch.from_numpy(RNG.standard_normal(shape).astype(np.float32))
    kw32, kw64 = windowed(kwargs)
    xs, kws = stft_both(x, kw32)
    at_least_as_close(mpsim.stft(xs, **kws), torch.stft(x.double(), **kw64),
                      torch.stft(x, **kw32))
    xs64, kws64 = stft_both(x.double(), kw64)
    close64(mpsim.stft(xs64, **kws64), torch.stft(x.double(), **kw64))


def test_stft_without_return_complex_gives_torch_1_13s_real_form():
    x = torch.from_numpy(RNG.standard_normal(100).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = torch.stft(x.double(), 16)
        theirs = torch.stft(x, 16)
        ours = mpsim.stft(m(x), 16)
    at_least_as_close(ours, exact, theirs)


ISTFT_CASES = [
    dict(n_fft=16, window="hann"),
    dict(n_fft=16, hop_length=3, window="hann", length=250),
    dict(n_fft=16, hop_length=4, window="hann", length=300),  # longer: zeros after the signal
    dict(n_fft=31, hop_length=7, win_length=20, window="hann"),
    dict(n_fft=64, hop_length=16, window="hamming", normalized=True),
    dict(n_fft=20, hop_length=5, window="hann", onesided=False),
    dict(n_fft=32, hop_length=8, center=False, window="hamming"),
    dict(n_fft=17, hop_length=4, win_length=9),
    dict(n_fft=20, hop_length=5, window="hann", onesided=False, return_complex=True),
]


@pytest.mark.filterwarnings("ignore:The length of signal is shorter")
@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("kwargs", ISTFT_CASES, ids=range(len(ISTFT_CASES)))
def test_istft_vs_torch_and_round_trip(kwargs, batched):
    shape = (2, 257) if batched else (257,)
    x = torch.from_numpy(RNG.standard_normal(shape).astype(np.float32))
    if kwargs.get("return_complex"):
        x = torch.from_numpy(complex_values(np.complex64, *shape))
    analysis = {k: v for k, v in kwargs.items() if k not in ("length", "return_complex")}
    kw32, kw64 = windowed(kwargs)
    a32, _ = windowed(analysis)
    spec = torch.stft(x, return_complex=True, **a32)
    ss, kws = stft_both(spec, kw32)
    ours = mpsim.istft(ss, **kws)
    at_least_as_close(ours, torch.istft(spec.to(torch.complex128), **kw64),
                      torch.istft(spec, **kw32))
    ss64, kws64 = stft_both(spec.to(torch.complex128), kw64)
    close64(mpsim.istft(ss64, **kws64), torch.istft(spec.to(torch.complex128), **kw64))
    # istft(stft(x)) gives x back (the part the frames cover) to float32's precision
    if not kwargs.get("return_complex"):
        xs, a = stft_both(x, a32)
        back = mpsim.istft(mpsim.stft(xs, return_complex=True, **a), **kws).numpy()
        assert back.shape[-1] == kwargs.get("length", back.shape[-1])
        want = x.numpy()[..., :back.shape[-1]]
        np.testing.assert_allclose(back[..., :want.shape[-1]], want, rtol=0,
                                   atol=1e-5 * np.abs(want).max())


def test_istft_takes_torch_1_13s_real_form():
    x = torch.from_numpy(RNG.standard_normal(100).astype(np.float32))
    spec = torch.stft(x, 16, return_complex=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.istft(torch.view_as_real(spec), 16)
    exact = torch.istft(spec.to(torch.complex128), 16)
    at_least_as_close(mpsim.istft(mpsim.view_as_real(m(spec)), 16), exact, theirs)


@pytest.mark.parametrize("call", [
    lambda x: mpsim.stft(x, 512, return_complex=True),  # n_fft longer than the padded signal
    lambda x: mpsim.stft(x, 0, return_complex=True),
    lambda x: mpsim.stft(x, 16, hop_length=0, return_complex=True),
    lambda x: mpsim.stft(x, 16, win_length=17, return_complex=True),
    lambda x: mpsim.stft(x, 16, window=mpsim.ones(15), return_complex=True),
    lambda x: mpsim.stft(x, 16, window=mpsim.ones(16, 1), return_complex=True),
    lambda x: mpsim.stft(x.reshape([1, 2, 50]), 16, return_complex=True),
    lambda x: mpsim.stft(x.to(mpsim.int32), 16, return_complex=True),
    lambda x: mpsim.istft(x, 16),  # real and not [..., 2]
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True), 18),  # freq size differs
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True), 16, onesided=False),
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True), 16, hop_length=20,
                          win_length=16),
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True), 16, win_length=17),
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True), 16, window=mpsim.zeros(16)),
    # a hann window vanishes at the first sample, which center=False keeps
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True, center=False), 16,
                          window=mpsim.from_dlpack(torch.hann_window(16)), center=False),
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True), 16, return_complex=True),
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True).reshape([1, 1, 9, 26]), 16),
    lambda x: mpsim.istft(mpsim.stft(x, 16, return_complex=True)[0], 16),  # 1-d
])
def test_stft_istft_refusals(call):
    x = mpsim.tensor(RNG.standard_normal(100).astype(np.float32))
    with pytest.raises(mpsim.Error):
        call(x)


def test_stft_and_istft_of_mps_tensors_run_on_the_cpu_only_under_the_fallback_policy():
    x = torch.from_numpy(RNG.standard_normal(200).astype(np.float32))
    w = torch.hann_window(32)
    cpu = mpsim.stft(m(x), 32, hop_length=8, window=m(w), return_complex=True)
    fallback = mpsim.fallback_enabled()
    try:
        mpsim.set_fallback_enabled(False)
        with pytest.raises(mpsim.Error, match="MPS"):
            mpsim.stft(m(x).to("mps"), 32, hop_length=8, window=m(w).to("mps"),
                       return_complex=True)
        with pytest.raises(mpsim.Error, match="MPS"):
            mpsim.istft(cpu.to("mps"), 32, hop_length=8, window=m(w).to("mps"))
        mpsim.set_fallback_enabled(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fallback's once-per-op warning
            dev = mpsim.stft(m(x).to("mps"), 32, hop_length=8, window=m(w).to("mps"),
                             return_complex=True)
            back = mpsim.istft(dev, 32, hop_length=8, window=m(w).to("mps"))
    finally:
        mpsim.set_fallback_enabled(fallback)
    assert dev.device == "mps" and back.device == "mps"
    assert dev.to("cpu").numpy().tobytes() == cpu.numpy().tobytes()
    want = mpsim.istft(cpu, 32, hop_length=8, window=m(w))
    assert back.to("cpu").numpy().tobytes() == want.numpy().tobytes()


def test_stft_of_a_complex_signal():
    x = torch.from_numpy(complex_values(np.complex64, 100))
    for kwargs in ({"return_complex": True}, {}, {"return_complex": False},
                   {"hop_length": 3, "normalized": True, "return_complex": True}):
        ours = mpsim.stft(m(x), 16, **kwargs)
        theirs = torch.stft(x, 16, **kwargs)
        assert tuple(ours.shape) == tuple(theirs.shape) and \
            str(ours.dtype) == str(theirs.dtype).replace("torch.", "mpsim.")
        at_least_as_close(ours, torch.stft(x.to(torch.complex128), 16, **kwargs), theirs)
    with pytest.raises(mpsim.Error, match="onesided"):
        mpsim.stft(m(x), 16, onesided=True, return_complex=True)


# ---- linalg.eig / eigvals -----------------------------------------------------------------------

def matched(ours, theirs, tol):
    """Each of torch's eigenvalues (per matrix) has its own eigenvalue of ours within tol."""
    o = ours.reshape(-1, ours.shape[-1]) if ours.ndim else ours
    t = theirs.reshape(-1, theirs.shape[-1])
    for a, b in zip(o, t):
        left = list(a)
        for w in sorted(b, key=lambda z: (z.real, z.imag)):
            k = int(np.argmin([abs(v - w) for v in left]))
            assert abs(left[k] - w) <= tol, (a, b)
            left.pop(k)


def check_eig(a, rel):
    """mpsim's eig and eigvals of the float tensor a, against torch in float64."""
    ours = mpsim.linalg.eig(m(a))
    w, v = ours.eigenvalues, ours.eigenvectors
    want = torch.complex64 if a.dtype == torch.float32 else torch.complex128
    assert w.dtype is mpsim_dtype(want) and v.dtype is mpsim_dtype(want)
    assert w.shape == a.shape[:-1] and v.shape == a.shape
    A = a.double().numpy().astype(np.complex128)
    W, V = w.numpy().astype(np.complex128), v.numpy().astype(np.complex128)
    scale = max(1.0, float(np.abs(A).max())) * a.shape[-1]
    resid = A @ V - V * W[..., None, :]
    assert np.abs(resid).max(initial=0) <= rel * scale, np.abs(resid).max()
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1.0, rtol=0, atol=10 * rel)
    theirs = torch.linalg.eigvals(a.double()).numpy()
    matched(W, theirs, 100 * rel * scale)
    matched(mpsim.linalg.eigvals(m(a)).numpy(), theirs, 100 * rel * scale)


@pytest.mark.parametrize("dtype,rel", [(torch.float32, 1e-5), (torch.float64, 1e-12)], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (16, 16), (2, 3, 4, 4), (64, 64)],
                         ids=str)
def test_eig_vs_torch(shape, dtype, rel):
    a = torch.from_numpy(RNG.standard_normal(shape).astype(np.float32)).to(dtype)
    check_eig(a, rel)


def test_eig_of_a_transposed_view():
    a = torch.from_numpy(RNG.standard_normal((2, 5, 5)).astype(np.float32))
    w = mpsim.linalg.eigvals(m(a).transpose(1, 2)).numpy()
    matched(w, torch.linalg.eigvals(a.double()).numpy(), 1e-4)  # A^T has A's eigenvalues
    ours = mpsim.linalg.eig(m(a)[:, ::2, ::2])
    at = a[:, ::2, ::2].contiguous().numpy().astype(np.complex128)
    v = ours.eigenvectors.numpy().astype(np.complex128)
    resid = at @ v - v * ours.eigenvalues.numpy()[..., None, :]
    assert np.abs(resid).max() <= 1e-5 * 3 * max(1.0, np.abs(at).max())


def test_eig_of_special_matrices():
    rotation = torch.tensor([[0.0, -1.0], [1.0, 0.0]])  # eigenvalues +-i
    check_eig(rotation, 1e-5)
    w = mpsim.linalg.eigvals(m(rotation)).numpy()
    assert sorted(w.imag.tolist()) == [-1.0, 1.0] and np.all(w.real == 0)
    jordan = torch.tensor([[2.0, 1.0], [0.0, 2.0]], dtype=torch.float64)  # defective
    assert np.all(mpsim.linalg.eigvals(m(jordan)).numpy() == 2.0)
    check_eig(torch.diag(torch.tensor([3.0, -1.0, 0.5])), 1e-5)
    check_eig(torch.zeros(3, 3), 1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_eig_of_a_symmetric_matrix_is_real(dtype):
    q, _ = np.linalg.qr(RNG.standard_normal((6, 6)))
    d = np.array([-3.0, -1.0, 0.5, 1.0, 2.5, 7.0])
    a = torch.from_numpy((q * d) @ q.T).to(dtype)
    a = (a + a.T) / 2
    w = mpsim.linalg.eigvals(m(a)).numpy()
    assert np.all(w.imag == 0), w
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(np.sort(w.real), torch.linalg.eigvalsh(a.double()).numpy(),
                               rtol=0, atol=tol * 7 * 6)
    check_eig(a, tol)


@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0), (0, 0)], ids=str)
def test_eig_of_empty_shapes(shape):
    a = torch.zeros(shape)
    ours, theirs = mpsim.linalg.eig(m(a)), torch.linalg.eig(a)
    same(ours.eigenvalues, theirs.eigenvalues)
    same(ours.eigenvectors, theirs.eigenvectors)
    same(mpsim.linalg.eigvals(m(a)), torch.linalg.eigvals(a))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_eig_of_non_finite_input_raises(bad):
    a = torch.eye(3)
    a[1, 2] = bad
    with pytest.raises(mpsim.Error):
        mpsim.linalg.eig(m(a))
    with pytest.raises(mpsim.Error):
        mpsim.linalg.eigvals(m(a.double()))
    with pytest.raises(mpsim.Error):
        mpsim.linalg.eig(mpsim.zeros(2, 3))
    with pytest.raises(mpsim.Error):
        mpsim.linalg.eig(mpsim.zeros(2, 2, dtype=mpsim.int64))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_eig_of_a_complex_matrix(dtype):
    a = torch.from_numpy(complex_values(dtype, 3, 5, 5))
    a128 = a.to(torch.complex128)
    ours = mpsim.linalg.eigvals(m(a))
    assert ours.dtype is mpsim_dtype(a.dtype) and tuple(ours.shape) == (3, 5)
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    matched(ours.numpy(), torch.linalg.eigvals(a128).numpy(), tol * 10)
    w, v = mpsim.linalg.eig(m(a))
    w, v = w.numpy().astype(np.complex128), v.numpy().astype(np.complex128)
    residual = a128.numpy() @ v - v * w[:, None, :]
    assert np.abs(residual).max() <= tol * np.abs(a128.numpy()).max() * 10
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=tol)
    order = [sorted(row, key=lambda z: (z.real, z.imag)) for row in w]
    np.testing.assert_array_equal(w, np.array(order))  # values ascending, real then imaginary
    with pytest.raises(mpsim.Error):
        mpsim.linalg.eigvals(m(a)[..., :4])
    bad = a.clone()
    bad[0, 0, 0] = complex(float("nan"), 0.0)
    with pytest.raises(mpsim.Error, match="infs or NaNs"):
        mpsim.linalg.eig(m(bad))


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_abs_of_complex_is_the_correctly_rounded_modulus(device):
    """abs of a complex tensor (an rfft's magnitude): hypot of the parts, rounded once into the
    part dtype; inf where a part is inf, even with a NaN part (C's hypot; torch 1.13's
    vectorized cpu abs gives NaN there), else NaN where a part is NaN."""
    rng = np.random.default_rng(11)
    z = (rng.standard_normal(4000) * np.exp(rng.uniform(-30, 30, 4000))
         + 1j * rng.standard_normal(4000) * np.exp(rng.uniform(-30, 30, 4000))).astype(np.complex64)
    z[:6] = [complex(np.inf, np.nan), complex(np.nan, -np.inf), complex(np.nan, 1.0),
             complex(-0.0, 0.0), complex(3e38, 3e38), complex(1e-45, 1e-45)]
    x = mpsim.tensor(z).to(device)
    got = mpsim.abs(x)
    assert got.dtype is mpsim.float32 and abs(x).dtype is mpsim.float32
    got = got.to("cpu").numpy()
    parts = z.view(np.float32).reshape(-1, 2).astype(np.longdouble)
    with np.errstate(over="ignore"):  # 3e38 sqrt(2) rounds to inf
        exact = np.sqrt(parts[:, 0] ** 2 + parts[:, 1] ** 2).astype(np.float64).astype(np.float32)
    # C's hypot(inf, NaN) is inf; 3e38 sqrt(2) overflows to inf; |1e-45 (1 + i)| is the
    # smallest subnormal (torch's re^2 + im^2 underflows to 0 there)
    specials = np.array([np.inf, np.inf, np.nan, 0.0, np.inf, np.float32(1e-45)], np.float32)
    np.testing.assert_array_equal(got[:6], specials)
    np.testing.assert_array_equal(got[6:], exact[6:])
    np.testing.assert_allclose(got[6:], torch.from_numpy(z[6:]).abs().numpy(), rtol=3e-7)
    r = mpsim.tensor(np.array([1 + 1j, 3 - 4j], np.complex128))
    assert mpsim.abs(r).dtype is mpsim.float64 and mpsim.abs(r).numpy()[1] == 5.0


# ---- complex arithmetic -----------------------------------------------------------------------

def _exact_pair(op, a, b):
    """op on the operands' exact values in complex128 (torch), the reference for a complex64
    result rounded once from double."""
    wide = [x.to(torch.complex128) if isinstance(x, torch.Tensor) and x.is_complex() else
            x.double() if isinstance(x, torch.Tensor) else x for x in (a, b)]
    return op(*wide)


ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
         "div": lambda a, b: a / b, "add_alpha": lambda a, b: torch.add(a, b, alpha=3),
         "sub_alpha": lambda a, b: torch.sub(a, b, alpha=0.5)}
M_ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "div": lambda a, b: a / b, "add_alpha": lambda a, b: mpsim.add(a, b, alpha=3),
           "sub_alpha": lambda a, b: mpsim.sub(a, b, alpha=0.5)}


@pytest.mark.parametrize("name", sorted(ARITH))
@pytest.mark.parametrize("other", ["complex", "complex_row", "real", "scalar", "int"])
def test_complex_arithmetic_is_rounded_once_from_double(name, other):
    a = torch.from_numpy(complex_values(np.complex64, 6, 5))
    b = {"complex": torch.from_numpy(complex_values(np.complex64, 6, 5)),
         "complex_row": torch.from_numpy(complex_values(np.complex64, 5)),
         "real": torch.from_numpy(RNG.standard_normal((6, 1)).astype(np.float32)),
         "scalar": 2.5, "int": torch.arange(1, 6, dtype=torch.int64)}[other]
    ours = M_ARITH[name](m(a), m(b) if isinstance(b, torch.Tensor) else b)
    theirs = ARITH[name](a, b)
    assert ours.dtype is mpsim.complex64 and tuple(ours.shape) == tuple(theirs.shape)
    exact = _exact_pair(ARITH[name], a, b)
    at_least_as_close(ours, exact, theirs)
    # rounded once from double: within half an ulp of the exact parts (plus double's error)
    o, e = parts(ours.numpy()), parts(exact.numpy())
    half_ulp = np.spacing(np.abs(e).astype(np.float32)).astype(np.float64) / 2
    assert (np.abs(o - e) <= half_ulp * (1 + 2.0**-20) + 2.0**-50 * np.abs(e).max()).all()


def test_complex_arithmetic_promotes_as_torch():
    c64 = torch.from_numpy(complex_values(np.complex64, 4))
    c128 = torch.from_numpy(complex_values(np.complex128, 4))
    f64 = torch.arange(4, dtype=torch.float64)
    for a, b in ((c64, f64), (f64, c64), (c64, c128), (c64, f64[0]), (f64, c128[0]),
                 (torch.arange(4, dtype=torch.float16), c128[0])):
        ours = m(a) * m(b)
        assert str(ours.dtype) == str((a * b).dtype).replace("torch.", "mpsim."), (a.dtype, b.dtype)


def test_complex_negation_sum_and_mean_are_torchs():
    a = torch.from_numpy(complex_values(np.complex64, 4, 6))
    same(-m(a), -a)
    for dims, keep in (((), False), ((0,), False), ((1,), True), ((-1, 0), False)):
        for mf, tf in ((mpsim.sum, torch.sum), (mpsim.mean, torch.mean)):
            ours = mf(m(a), dim=list(dims), keepdim=keep) if dims else mf(m(a))
            want = tf(a.to(torch.complex128), dim=dims, keepdim=keep) if dims else \
                tf(a.to(torch.complex128))
            assert ours.dtype is mpsim.complex64 and tuple(ours.shape) == tuple(want.shape)
            np.testing.assert_allclose(ours.numpy(), want.numpy(), rtol=2e-7, atol=1e-7)


def test_fft_convolution_matches_numpys_exact_convolution():
    a = RNG.standard_normal(700).astype(np.float32)
    b = RNG.standard_normal(300).astype(np.float32)
    n = 1024
    got = mpsim.fft.irfft(mpsim.fft.rfft(mpsim.tensor(a), n=n) * mpsim.fft.rfft(mpsim.tensor(b),
                                                                              n=n), n=n)
    want = np.convolve(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(got.numpy()[:999], want, atol=2e-5 * np.abs(want).max())


def test_complex_arithmetic_on_mps_takes_the_fallback_policy():
    a = torch.from_numpy(complex_values(np.complex64, 8))
    cpu = m(a) * m(a)
    fallback = mpsim.fallback_enabled()
    try:
        mpsim.set_fallback_enabled(False)
        with pytest.raises(mpsim.Error, match=r"\[mul\].*mps"):
            m(a).to("mps") * m(a).to("mps")
        same(-m(a).to("mps"), -a)  # negation runs on the device
        mpsim.set_fallback_enabled(True)
        dev = m(a).to("mps") * m(a).to("mps")
    finally:
        mpsim.set_fallback_enabled(fallback)
    assert dev.device == "mps" and dev.to("cpu").numpy().tobytes() == cpu.numpy().tobytes()


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1), (-2,)])
def test_fftshift_of_a_complex_spectrum_is_torchs(dim):
    a = torch.from_numpy(complex_values(np.complex64, 5, 6))
    for mf, tf in ((mpsim.fft.fftshift, torch.fft.fftshift),
                   (mpsim.fft.ifftshift, torch.fft.ifftshift)):
        same(mf(m(a), dim=dim), tf(a, dim=dim))
        same(mf(m(a).to("mps"), dim=dim), tf(a, dim=dim))
    with pytest.raises(mpsim.Error, match=r"\[roll\]"):
        mpsim.fft.fftshift(m(a), dim=2)


def test_python_complex_numbers_take_torchs_default_complex_dtype():
    for data in ([1 + 2j, 3.5], 1j, [[1j], [2.0]]):
        assert str(mpsim.tensor(data).dtype) == str(torch.tensor(data).dtype).replace(
            "torch.", "mpsim.")
        same(mpsim.tensor(data), torch.tensor(data))
    assert mpsim.tensor(np.complex128(1j)).dtype is mpsim.complex128  # NumPy keeps its own
    for t in (torch.ones(2), torch.ones(2, dtype=torch.float64),
              torch.ones(2, dtype=torch.complex64)):
        for scalar in (1j, 2 - 0.5j):
            same(m(t) * scalar, t * scalar)
            same(m(t) + scalar, t + scalar)


MOVES = {
    "flip": (lambda x, c, d: mpsim.flip(x, [0, -1]), lambda t, c, d: torch.flip(t, [0, -1])),
    "index_select": (lambda x, c, d: mpsim.index_select(x, -1, d(mpsim.tensor([3, 0, 3]))),
                     lambda t, c, d: torch.index_select(t, -1, torch.tensor([3, 0, 3]))),
    "getitem": (lambda x, c, d: x[d(mpsim.tensor([2, 0]))], lambda t, c, d: t[torch.tensor([2, 0])]),
    "getitem_bool": (lambda x, c, d: x[d(mpsim.tensor([True, False, True]))],
                     lambda t, c, d: t[torch.tensor([True, False, True])]),
    "gather": (lambda x, c, d: mpsim.gather(x, 1, d(mpsim.tensor([[0], [3], [1]]))),
               lambda t, c, d: torch.gather(t, 1, torch.tensor([[0], [3], [1]]))),
    "where": (lambda x, c, d: mpsim.where(d(mpsim.tensor([True, False, True, False])), x, c),
              lambda t, c, d: torch.where(torch.tensor([True, False, True, False]), t, c)),
    "where_scalar": (lambda x, c, d: mpsim.where(d(mpsim.tensor([True, False, True, False])), x, 0.0),
                     lambda t, c, d: torch.where(torch.tensor([True, False, True, False]), t,
                                              torch.tensor(0.0))),
    "pad": (lambda x, c, d: mpsim.nn.functional.pad(x, [1, 2], value=5.0),
            lambda t, c, d: torch.nn.functional.pad(t, [1, 2], value=5.0)),
    "pad_reflect": (lambda x, c, d: mpsim.nn.functional.pad(x.unsqueeze(0), [2, 1],
                                                         mode="reflect"),
                    lambda t, c, d: torch.nn.functional.pad(t.unsqueeze(0), [2, 1],
                                                         mode="reflect")),
    "tril": (lambda x, c, d: mpsim.tril(x, 1), lambda t, c, d: torch.tril(t, 1)),
    "triu": (lambda x, c, d: mpsim.triu(x, -1), lambda t, c, d: torch.triu(t, -1)),
    "masked_fill": (lambda x, c, d: x.masked_fill(d(mpsim.tensor([True, False, False, True])), 2.0),
                    lambda t, c, d: t.masked_fill(torch.tensor([True, False, False, True]), 2.0)),
}


@pytest.mark.parametrize("name", sorted(MOVES))
@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_complex_tensors_move_as_torchs(name, device):
    """flip, index_select, gather, indexing, where, pad, tril/triu and masked_fill of complex
    tensors: the same elements as torch's, bit for bit (Note [complex moves])."""
    a = torch.from_numpy(complex_values(np.complex64, 3, 4))
    c = torch.from_numpy(complex_values(np.complex128, 4))
    ours, theirs = MOVES[name]
    if device != "cpu":
        c = c.to(torch.complex64)  # mps has no complex128
    got = ours(m(a).to(device), m(c).to(device), lambda t: t.to(device))
    same(got, theirs(a, c, None))
