#!/usr/bin/python3
"""Common ops on an SD feature map [2, 320, 64, 64] float32, NCHW and channels-last: mpsim beside
PyTorch 1.13 in one process, best of 10 calls each, one thread both (torch.set_num_threads(1),
MPSIM_NUM_THREADS=1). Flags rows where mpsim takes more than twice PyTorch's time.

Usage: OPENBLAS_CORETYPE=SkylakeX ATEN_CPU_CAPABILITY=avx512 MPSIM_NUM_THREADS=1 \
           /usr/bin/python3 bench/torch_sweep.py [--build build]
(the build needs the Python module: scripts/build.sh -DMPSIM_BUILD_PYTHON=ON).
"""
import argparse
import os
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--build", default="build", help="the build directory holding python/mpsim")
args = ap.parse_args()
sys.path.insert(0, os.path.join(args.build, "python"))
os.environ.setdefault("MPSIM_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import mpsim  # noqa: E402

torch.set_num_threads(1)
rng = np.random.default_rng(0)
xn = rng.standard_normal((2, 320, 64, 64)).astype(np.float32)
def best(f, n=10):
    b = 1e9
    for _ in range(n):
        t = time.perf_counter(); f(); b = min(b, time.perf_counter() - t)
    return b * 1e3
def pair(lib):
    t = (lambda a: mpsim.tensor(a)) if lib is mpsim else (lambda a: torch.from_numpy(a.copy()))
    x = t(xn); xc = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    idx = t(rng.integers(0, 64, (2, 320, 64, 64)).astype(np.int64))
    i1 = t(np.arange(0, 320, 2).astype(np.int64))
    g = t(np.ones(320, np.float32)); bb = t(np.zeros(320, np.float32))
    return x, xc, idx, i1, g, bb
M = pair(mpsim); T = pair(torch)
cases = {
  'sum dim1': lambda L, x, xc, idx, i1, g, b: L.sum(x, 1),
  'sum dim1 cl': lambda L, x, xc, idx, i1, g, b: L.sum(xc, 1),
  'sum dim(2,3)': lambda L, x, xc, idx, i1, g, b: L.sum(x, (2, 3)),
  'mean dim(2,3) cl': lambda L, x, xc, idx, i1, g, b: L.mean(xc, (2, 3)),
  'amax dim1': lambda L, x, xc, idx, i1, g, b: L.amax(x, 1),
  'argmax dim1': lambda L, x, xc, idx, i1, g, b: L.argmax(x, 1),
  'var dim(2,3)': lambda L, x, xc, idx, i1, g, b: L.var(x, (2, 3)),
  'softmax dim1': lambda L, x, xc, idx, i1, g, b: L.softmax(x, 1),
  'softmax dim1 cl': lambda L, x, xc, idx, i1, g, b: L.softmax(xc, 1),
  'softmax dim-1 cl': lambda L, x, xc, idx, i1, g, b: L.softmax(xc, -1),
  'logsumexp dim1': lambda L, x, xc, idx, i1, g, b: L.logsumexp(x, 1),
  'cat dim1': lambda L, x, xc, idx, i1, g, b: L.cat([x, x], 1),
  'cat dim1 cl': lambda L, x, xc, idx, i1, g, b: L.cat([xc, xc], 1),
  'stack': lambda L, x, xc, idx, i1, g, b: L.stack([x, x], 0),
  'flip dim3': lambda L, x, xc, idx, i1, g, b: L.flip(x, (3,)),
  'flip dim1 cl': lambda L, x, xc, idx, i1, g, b: L.flip(xc, (1,)),
  'gather dim3': lambda L, x, xc, idx, i1, g, b: L.gather(x, 3, idx),
  'index_select dim1': lambda L, x, xc, idx, i1, g, b: L.index_select(x, 1, i1),
  'index_select dim1 cl': lambda L, x, xc, idx, i1, g, b: L.index_select(xc, 1, i1),
  'where cl': lambda L, x, xc, idx, i1, g, b: L.where(xc > 0, xc, xc * 2),
  'clamp cl': lambda L, x, xc, idx, i1, g, b: L.clamp(xc, -1.0, 1.0),
  'pow 2 cl': lambda L, x, xc, idx, i1, g, b: L.pow(xc, 2.0),
  'tril': lambda L, x, xc, idx, i1, g, b: L.tril(x),
  'group_norm': lambda L, x, xc, idx, i1, g, b: L.group_norm(x, 32, g, b) if L is mpsim else torch.nn.functional.group_norm(x, 32, g, b),
  'group_norm cl': lambda L, x, xc, idx, i1, g, b: L.group_norm(xc, 32, g, b) if L is mpsim else torch.nn.functional.group_norm(xc, 32, g, b),
  'layer_norm last': lambda L, x, xc, idx, i1, g, b: (L.layer_norm(x, (64,)) if L is mpsim else torch.nn.functional.layer_norm(x, (64,))),
  'batch_norm': lambda L, x, xc, idx, i1, g, b: (L.batch_norm(x, b, g, g, b) if L is mpsim else torch.nn.functional.batch_norm(x, b, g, g, b)),
  'batch_norm cl': lambda L, x, xc, idx, i1, g, b: (L.batch_norm(xc, b, g, g, b) if L is mpsim else torch.nn.functional.batch_norm(xc, b, g, g, b)),
  'pad 1': lambda L, x, xc, idx, i1, g, b: (L.pad(x, (1, 1, 1, 1)) if L is mpsim else torch.nn.functional.pad(x, (1, 1, 1, 1))),
  'pad 1 cl': lambda L, x, xc, idx, i1, g, b: (L.pad(xc, (1, 1, 1, 1)) if L is mpsim else torch.nn.functional.pad(xc, (1, 1, 1, 1))),
  'to f16 cl': lambda L, x, xc, idx, i1, g, b: xc.to(L.float16),
  'contiguous cl': lambda L, x, xc, idx, i1, g, b: xc.contiguous(),
  'norm': lambda L, x, xc, idx, i1, g, b: L.norm(x),
  'prod dim1': lambda L, x, xc, idx, i1, g, b: L.prod(x, 1),
}
for k, f in cases.items():
    try:
        tm = best(lambda: f(mpsim, *M)); tt = best(lambda: f(torch, *T))
        flag = '  <<<' if tm > 2 * tt else ''
        print(f'{k:24s} mpsim {tm:8.3f}  torch {tt:8.3f}  ratio {tm/tt:6.2f}{flag}')
    except Exception as e:
        print(f'{k:24s} error {type(e).__name__}: {str(e)[:80]}')
