#!/usr/bin/python3
"""Writes docs/performance.md and its plots (docs/img/) from one run of the benchmark drivers.
(Over 800 lines because the page's template lives here, beside the code that fills it: one file
to read when a table changes.)

Usage: /usr/bin/python3 bench/report.py [--build build] [--threads 2] [--quick]
                                        [--out docs/performance.md] [--traces DIR]
                                        [--data FILE | --from-data FILE]

Builds nothing: expects `scripts/build.sh -DMPSIM_BUILD_BENCH=ON -DMPSIM_BUILD_PYTHON=ON`
done into --build. Runs, in this order: bench/compare.py's measure() (elementwise_bench against
PyTorch, alternating rounds), bench/linalg_compare.py's measure() (linalg_bench: mpsim,
OpenBLAS, oneDNN, Eigen and the FMA peak, alternating with PyTorch), fusion_bench,
norm_floor_bench, `mpsim alloc-replay` on the shared traces, bench/cr_speed.py's measure() (the
correctly rounded ops on 1 and 2 threads) and bench/torch_sweep.py's large-argument trig and
16-bit rows (one thread). Then it fills TEMPLATE below and writes the plots into
img/ beside --out. --quick runs a few cases once each, to check the script, not the numbers
(point --out elsewhere: the plots follow it). The raw measurements go to --data (default
BUILD/report.json); --from-data rewrites the page and plots from such a file, measuring nothing
(for edits to the template).
"""
import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare  # noqa: E402  (sets OPENBLAS_CORETYPE and ATEN_CPU_CAPABILITY before torch loads)
import cr_speed  # noqa: E402
import linalg_compare  # noqa: E402

# elementwise_bench cases in the report (POSIX ERE for Google Benchmark, Python re for PyTorch):
# the unary_cache cases are one-thread arithmetic measurements, not part of the tables.
FULL_PATTERN = r"^(BM_|group_norm_case/|sum_case/|ops2/|unary/|unary_fast/|eigen_unary/)"
QUICK_PATTERN = (r"^(BM_copy|BM_mul/|BM_layer_norm|unary/(exp|relu)/|unary_fast/exp/|"
                 r"eigen_unary/exp|ops2/(mean_first|to_f16)/)")
QUICK_LINALG = ["peak", "mm 256x", "depthwise"]

UNARY = ["exp", "log", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh", "erf", "sin", "cos",
         "rsqrt", "log1p", "expm1", "softplus", "sqrt", "relu", "abs", "neg", "square",
         "reciprocal"]
MEMORY_BOUND_UNARY = ["sqrt", "relu", "abs", "neg", "square", "reciprocal"]
# Kernels II rows: (elementwise_bench case, label, shape).
KERNELS = [
    ("BM_softmax_rows/iterations:3/real_time", "softmax (rows)", "[2, 8, 4096, 1024]"),
    ("ops2/log_softmax_rows/real_time", "log_softmax (rows)", "[8192, 1024]"),
    ("BM_layer_norm/real_time", "layer_norm", "[2, 4096, 320] over 320"),
    ("ops2/rms_norm/real_time", "rms_norm", "[2, 4096, 320] over 320"),
    ("group_norm_case/nchw/real_time", "group_norm, NCHW", "[2, 320, 64, 64], 32 groups"),
    ("group_norm_case/nhwc/real_time", "group_norm, channels-last", "[2, 320, 64, 64], 32 groups"),
    ("ops2/batch_norm/real_time", "batch_norm (eval)", "[2, 320, 64, 64]"),
    ("sum_case/last/real_time", "sum, last dim", "[4096, 4096]"),
    ("sum_case/first/real_time", "sum, first dim", "[4096, 4096]"),
    ("sum_case/short_rows/real_time", "sum, last dim (short rows)", "[8192, 320]"),
    ("ops2/mean_first/real_time", "mean, first dim", "[4096, 4096]"),
    ("ops2/var_last/real_time", "var, last dim", "[4096, 4096]"),
    ("ops2/amax_last/real_time", "amax, last dim", "[4096, 4096]"),
    ("ops2/argmax_last/real_time", "argmax, last dim", "[4096, 4096]"),
    ("ops2/logsumexp_last/real_time", "logsumexp, last dim", "[4096, 4096]"),
    ("ops2/prod_last/real_time", "prod, last dim", "[4096, 4096]"),
    ("BM_permute_to_channels_last/real_time", "permute to channels-last", "[2, 320, 64, 64]"),
    ("ops2/transpose_2d/real_time", "transpose (.t().contiguous())", "[4096, 4096]"),
    ("BM_cat/real_time", "cat (dim 1)", "2 x [2, 320, 64, 64]"),
    ("ops2/stack/real_time", "stack", "2 x [2, 320, 64, 64]"),
    ("ops2/slice_step2/real_time", "slice, step 2", "[2, 320, 64, 64]"),
    ("ops2/flip_w/real_time", "flip (W)", "[2, 320, 64, 64]"),
    ("ops2/repeat_h2/real_time", "repeat (H twice)", "[2, 320, 64, 64]"),
    ("ops2/pad_reflect/real_time", "pad reflect (1)", "[2, 320, 64, 64]"),
    ("ops2/pad_constant/real_time", "pad constant (1)", "[2, 320, 64, 64]"),
    ("ops2/tril/real_time", "tril", "[4096, 4096]"),
    ("ops2/index_select_rows/real_time", "index_select (8192 rows)", "[8192, 320]"),
    ("ops2/gather_last/real_time", "gather, last dim", "[4096, 1024]"),
    ("ops2/to_f16/real_time", "float32 -> float16", "16M"),
    ("ops2/to_bf16/real_time", "float32 -> bfloat16", "16M"),
    ("ops2/f16_to_f32/real_time", "float16 -> float32", "16M"),
    ("ops2/to_int32/real_time", "float32 -> int32", "16M"),
    ("ops2/rand/real_time", "rand", "16M"),
    ("ops2/randn/real_time", "randn", "16M"),
    ("ops2/randint/real_time", "randint", "16M"),
    ("ops2/dropout/real_time", "dropout (p = 0.1)", "16M"),
    ("ops2/linspace/real_time", "linspace", "16M"),
]
READ_ONLY = {"sum_case/last/real_time", "sum_case/first/real_time",
             "sum_case/short_rows/real_time", "ops2/mean_first/real_time",
             "ops2/var_last/real_time", "ops2/amax_last/real_time", "ops2/argmax_last/real_time",
             "ops2/logsumexp_last/real_time", "ops2/prod_last/real_time"}
# The copy references: (case, label); a clone of 64 MiB, of 21 MiB (cat's output) and of
# 10.5 MiB (one [2, 320, 64, 64] tensor).
COPIES = [("BM_copy/real_time", "copy"), ("BM_copy_cat/real_time", "copy_cat"),
          ("BM_copy_sd/real_time", "copy_sd")]
FUSIONS = [("bias_add", "bias_add(x, bias, skip)", "[2, 4096, 320]"),
           ("bias_split_gelu", "bias_split_gelu (GEGLU)", "[2, 4096, 2560]"),
           ("skip_layer_norm", "skip_layer_norm", "[2, 4096, 320]"),
           ("group_norm_nhwc_silu", "group_norm_nhwc + silu", "[2, 64, 64, 320], 32 groups"),
           ("multi_head_attention", "multi_head_attention (packed QKV)", "[2, 1024, 8, 3, 40]")]
NORM_FLOORS = [("copy_memcpy", "memcpy of the bytes"),
               ("copy_stream", "streaming-store copy of the bytes"),
               ("no_dependency", "the arithmetic with nothing waiting (a floor: wrong outputs)"),
               ("two_stage", "a correct two-stage layer_norm, fused multiply-adds"),
               ("three_stage", "three stages (mean, deviations, output), fused"),
               ("three_stage_unfused", "three stages, separate multiplies and adds"),
               ("mpsim", "mpsim::layer_norm")]
GEMM_FLOORS = [("fma_registers", "24 chains of FMAs on registers: the FMA peak"),
               ("kernel_l1", "the 8 x 3 micro-kernel, K = 128, both panels in L1"),
               ("tile_hot", "the engine's blocking, 96 x 576 x 1024, packed operands in cache"),
               ("mpsim_mm", "mpsim::mm 1024^3, Fast"),
               ("mpsim_conv3x3", "mpsim::conv2d 3x3 320 -> 320, [1, 320, 64, 64] channels-last, Fast")]
DEPTHWISE_FLOORS = [("fma_registers", "24 chains of FMAs on registers: the FMA peak"),
                    ("dw_l1", "the arithmetic on 3 dense rows of one vector of channels in L1"),
                    ("dw_in_place", "x read in place, channels-last, sizes known at compile time"),
                    ("dw_staged", "the same, each row's vector of channels first copied to a dense ring"),
                    ("dw_same_layout", "dw_in_place on an unpadded x and an out of one layout, both starting a 2 MiB page, as mpsim's tensors (interior outputs)"),
                    ("dw_same_layout_out_shifted", "the same with out 128 bytes further on"),
                    ("mpsim_depthwise", "mpsim::conv2d, groups 320, [1, 320, 64, 64] channels-last, Fast")]
# The floors of Limits: FP-port instructions per 8 elements (read off the compiled loops),
# elements, and the copy whose bytes the op moves.
FLOORS = [("softmax [2, 8, 4096, 1024]", "BM_softmax_rows/iterations:3/real_time",
           "17 exp pass + 3 output + 2 max", 22, 2 * 8 * 4096 * 1024),
          ("layer_norm [2, 4096, 320]", "BM_layer_norm/real_time",
           "5 statistics + 6 output", 11, 2 * 4096 * 320),
          ("group_norm NCHW [2, 320, 64, 64]", "group_norm_case/nchw/real_time",
           "0.4 shift + 5 statistics + 6 output", 11.4, 2 * 320 * 64 * 64)]
ALLOCATORS = ["buddy", "caching", "malloc", "jemalloc", "mimalloc", "tbbmalloc"]
ALLOCATOR_LABELS = {"buddy": "mpsim buddy", "caching": "mpsim caching (32 MiB cap)",
                    "malloc": "glibc malloc", "jemalloc": "jemalloc", "mimalloc": "mimalloc",
                    "tbbmalloc": "tbbmalloc"}
TRACES = [("sd15_unet_fp16_8steps.trace", "SD 1.5 UNet"), ("resnet50_train_bs32.trace", "ResNet-50")]
# The correctly rounded float-lane ops (bench/cr_speed.py), the double-lane group beside them, and
# the torch_sweep.py rows of the large trig arguments and the 16-bit tables.
# The pow group's float-lane rows whose slow-lane rates the text quotes (unary_cache/<op>).
LANE_RATE_OPS = ["pow_1.5", "gelu", "asin", "acos"]
CR_OPS = ["exp", "expm1", "log", "log1p", "sigmoid", "silu", "tanh", "softplus", "gelu_tanh", "sin",
          "cos", "rsqrt", "exp2", "log2", "log10", "sinh", "cosh", "asinh", "acosh", "atanh", "atan"]
POW_OPS = ["pow_1.5", "pow_2.2", "pow_0.4545", "pow_-0.5", "pow_5", "erfc", "tan", "asin", "acos",
           "gelu", "erf"]
CACHE_OPS = ["exp", "log", "sigmoid", "silu"]
TRIG_ROWS = ["sin |x| in [2^19, 2^100]", "cos |x| in [2^19, 2^100]", "tan |x| in [2^19, 2^100]"]
HALF_ROWS = ["bf16 exp", "bf16 log", "bf16 sigmoid", "bf16 silu", "bf16 tanh", "bf16 gelu",
             "bf16 erf", "bf16 sin", "bf16 tan", "bf16 rsqrt", "bf16 sqrt", "bf16 reciprocal",
             "bf16 square", "bf16 abs", "bf16 relu", "f16 exp (torch f32)",
             "f16 gelu (torch f32)", "f16 rsqrt (torch f32)", "f16 sqrt (torch f32)"]
# bench/torch_sweep.py's rows of special values: a mask of -inf every other element, negative
# inputs, inputs outside the domain.
SPECIAL_FILTERS = ["masked", "half negative", "outside", "NaN every"]

TEMPLATE = """\
# Performance

How fast mpsim's cpu kernels are beside PyTorch 1.13, Eigen, OpenBLAS and oneDNN on this
machine, and what bounds them. One command measures every number on this page and rewrites it
and its plots:

    {build_command}
    {command}

A full run takes about {minutes}.{remeasured} Machine: {machine}; {threads} threads for every
library
(Eigen's arrays: one; they do not thread). Its limits, measured by the same run: a 64 MiB clone
moves {copy_gbs} GB/s (read + written), a 10.5 MiB one {copy_sd_gbs} GB/s; the FMA peak on
{threads} threads is {peak_f32} GFLOP/s in float32 and {peak_f64} in float64 (`linalg_bench`: 12
independent 512-bit FMA chains per thread, the best of 20 tries). docs/performance_avx2.md
has the correctly rounded unary tables on a CPU without AVX-512.

## How we measure

- **Alternating rounds, best round.** The machine is shared: one benchmark moves by 20-50%
  between minutes. Each driver alternates the libraries: a round is mpsim's Google Benchmark
  binary (median of 3 repetitions per case), then the same cases in PyTorch (median of {repeat}
  calls per case); {rounds} rounds, and each library keeps its fastest round. A slow spell only
  adds time, so the best round is the closest to the machine's speed, taken the same way for
  both. Ratios are PyTorch's time over mpsim's (above 1: mpsim is faster); within about 10% of 1
  they are level.
- **Call by call, median** for the correctly rounded tables (`bench/cr_speed.py`): one process
  per thread count calls PyTorch, mpsim's golden kernel and its Fast one in turn on the same
  inputs, {cr_calls} times, and each keeps its median. In separate processes PyTorch's own time
  for a row moved by up to 1.4x between runs (sigmoid on [2, 320, 64, 64], one thread: 1.81 to
  2.60 ms); interleaved, a slow spell hits all three alike: two runs of ten ops gave ratios
  within 10% of each other in most rows, 18% at worst. Both libraries read and write the same
  memory (PyTorch's tensors view mpsim's, in 2 MiB pages: Note [huge pages]), so the rows
  compare kernels, not page sizes: PyTorch's own tensors are in 4 KiB pages here.
- **PyTorch** is Debian's `python3-torch` 1.13 at its best settings here:
  `OPENBLAS_CORETYPE={coretype} ATEN_CPU_CAPABILITY={aten}` (bench/torch_env.py: the widest
  vector extension the CPU has), `torch.set_num_threads({threads})`.
  Elementwise and unary ops write into preallocated outputs (`out=`); every other op allocates
  its output in both libraries (a caching host allocator spares mpsim the page faults that
  PyTorch pays on large outputs, Note [host block cache]).
- **Of copy**: the time a clone of the nearest footprint (64, 21 or 10.5 MiB) takes to move the
  op's bytes (inputs read once, output written once), over the op's time. Reductions only read,
  so theirs can pass 100%.
- One family at a time: `bench/compare.py --build {build} --filter REGEX` (the first two
  tables), `bench/linalg_compare.py --build {build} --filter SUBSTRING` (matmul, conv2d,
  attention); the unary ops interleaved in one process: `bench/interleave.py`; their one-core
  arithmetic in cache: `bench/compare.py --threads 1 --filter 'unary_cache/|unary_fast_cache/'`.
- **Two builds of mpsim**, to judge a kernel change: `{build}/bench/ab_rows --ops exp,log
  OLD/libmpsim.so NEW/libmpsim.so` loads both in one process and times their golden float32
  rows alternately (64Ki floats in cache, the 10th percentile of 300 calls each). Separate runs
  move by 10-30% between minutes here; a build against itself agrees within about 2% this way.

![PyTorch time / mpsim time per op](img/ops_vs_pytorch.png)

## Elementwise and unary ops (16M float32, 64 MiB per tensor)

ms per call. Golden is the default (evaluated in double, rounded once, the same bits on every
SIMD target); Fast is the opt-in float kernel within 1 ULP (docs/numerics.md). The copy of the
same bytes takes {copy_ms} ms.

{unary_table}

- **Memory-bound ops** ({memory_ops}) run at {memory_range} PyTorch's speed: outputs of 16 MiB
  and more leave through streaming stores, which skip the read-for-ownership of every line
  written (Note [streaming stores]). The broadcast add's 10.5 MiB output stays below that
  threshold ({add_ratio}).
- **Golden {cr_short_list}** run in float lanes (the section below has them on two sizes and
  both thread counts).
- **Golden gelu** (erf form) runs at {gelu_range} PyTorch's speed (the section "pow with a
  scalar exponent, erfc, tan, asin, acos, gelu and erf" below), the price of correct rounding
  against PyTorch's float evaluation (about 1 ULP, as fast as mpsim's Fast): on AVX-512 in
  float lanes (Note [correctly rounded float lanes], gelu), where the log of the normal tail
  as a 32-piece polynomial with three pair coefficients, exp's core on that log's unnormalized
  pair, the product with |x| and the monotone test make 72 vector arithmetic instructions per
  16 outputs in the compiled loop (twelve table permutes among them, exp's two included), 119
  with their register copies and reloads in the two-stage loop (Note [two-stage float lanes]);
  the double-lane evaluation that other targets run takes about 176 per 16 on AVX-512. erf
  runs at {erf_range}.
- **Fast** kernels (Note [fast float unary]) run at {fast_range} PyTorch's speed: a
  table-driven exp with a degree-4 polynomial, sigmoid and gelu as piecewise polynomials over
  32-entry tables (one `vpermt2ps` per coefficient on AVX-512), sin and cos reduced by pi/16.
  Eigen's gelu, x/2 (1 + erf(x/sqrt 2)), cancels for x < -5.

### Correctly rounded golden ops in float lanes

On targets with FMA, {cr_count} functions run their golden float32 path in float lanes,
correctly rounded on every input (docs/numerics.md, "Correctly rounded on every input"): a float
pair with a proven error bound, a per-lane rounding test, and the value-by-value path for the
lanes the test cannot certify (the slow-lane rate below): {cr_list}. sin and cos (and tan, in
the next section) evaluate in double lanes within the same frame: a two-FMA reduction and one
polynomial take fewer instructions than any float pair. ms per call, inputs uniform
on [-8, 8] ([0.01, 8] for log, log1p, log2, log10, rsqrt; [1.01, 8] for acosh; [-0.99, 0.99]
for atanh), PyTorch at its best settings with the same thread count, each one's median of
{cr_calls} calls on the same inputs, PyTorch, golden and Fast alternating call by call in one
process (`bench/cr_speed.py --build {build} --calls {cr_calls} --ops OP,...` prints one such
table; "How we measure"):

{cr_table}

{cr_rates}

- **At least as fast as PyTorch in every row**: {cr_faster}.
- **Behind PyTorch in some row**: {cr_behind}. The floor is instruction count: the float pair,
  the rounding test and the table lookups make 23 vector arithmetic instructions per 16 exp
  outputs in the compiled AVX-512 loop (register copies, loads and stores aside), sigmoid 35
  and gelu 72, against PyTorch's ~17 for its 1-ULP exp (`objdump -d
  build/CMakeFiles/mpsim.dir/kernels_simd/unary_cr_exp.cc.o`, the loops of `CrRow<...CrExp>`
  and the others in N_AVX3; log's in `unary_cr.cc.o`, log1p's and the trigonometric ones' in
  `unary_cr_log.cc.o`). Each vector is one long dependency chain, so `CrRow` evaluates two at
  a time, in two stages, software pipelined: the first half of the next two vectors' chains
  beside the second half of the two before (Note [two-stage float lanes] in
  `kernels_simd/unary_cr-inl.h`: otherwise the scheduler fills with instructions that wait on
  their own chain); on AVX-512 asin, acos, log2, log10, rsqrt, gelu, gelu(tanh), exp2, atan
  and sigmoid run four at a time so (1.02-1.20x as fast in cache as two). Every op here but log is compiled with GCC's first scheduling
  pass, which interleaves the chains (Note [scheduled float lanes] in
  `kernels_simd/unary_cr_parts.h`: tanh and softplus 1.2x as fast in cache, log1p 1.19x,
  sigmoid and silu 1.06x). The loop stores each pair's results before its one branch on both
  vectors' rounding tests (special lanes and the value-by-value path lie behind it), and an
  op's certified range is one unsigned compare of x's bits under the test's own compare
  (`Within`, `EqWhere`): in cache, against a branch per vector before the stores and two
  compares for the range, rsqrt runs 1.33x as fast, sigmoid 1.17x, silu and gelu(tanh)
  1.15-1.17x, log, log2, log10 and exp 1.11-1.13x, sin 1.05x (`build/bench/ab_rows`).
- **The slow lanes**: {cr_rate_range} of random inputs fail the rounding test (about 1 in 256
  for the functions certified with C = 1 + 2^-8, 1 in 500 for log, log1p, log2, log10 and
  silu, 1 in 700 for sigmoid and 1 in 1400 for exp, which test hi + lo +- D,
  and 1 in 1000-2000 for those with a tighter budget: expm1, tanh, sinh, atan and rsqrt; rsqrt
  1 in 33000 on AVX2), and cost a pass
  through the value-by-value path each. Adversarial inputs (every
  lane near a boundary) are still correctly rounded, only slower: `unary_cr_slow/exp` below.
- **What Fast still buys**: {fast_gain} over golden on [2, 320, 64, 64] ({fast_ops}), at the
  cost of up to 0.84 ULP and bits that differ between SIMD targets.
- One core in cache (`MPSIM_NUM_THREADS=1 build/bench/elementwise_bench
  --benchmark_filter='unary_(cr_slow|cache|fast_cache)/'`), ms per 64Ki floats: {cache_sentence}

### pow with a scalar exponent, erfc, tan, asin, acos, gelu and erf

pow of float32 is correctly rounded (docs/numerics.md, "pow: correctly rounded x^y"): y = -1/2
runs the correctly rounded rsqrt row (one pass through its float lanes), an integral y with
4 <= |y| <= 64 binary powering in double lanes (Note [integer powers]: pow_5), the other
exponents beyond Note [exact powers] float lanes on targets with FMA (Note [correctly rounded
float lanes], pow: e^(y log x) from the golden log's and exp's pairs, a rounding test whose
bound grows with |y log x|; {pow_slow} of these random lanes take the double-lane row, which
other targets run for every lane); erfc runs double lanes under the hard-lane test (Note
[erfc in double lanes]), tan double lanes in the float-lane frame on targets with FMA (Note
[correctly rounded float lanes], tan); asin, acos and gelu (erf form) run float lanes on
AVX-512, gelu on AVX2 too (the same Note, asin and acos: {asin_slow} and {acos_slow} of random lanes, and gelu:
{gelu_slow}, take the double lanes, which the other targets run for every lane: Notes [asin and
acos in double lanes] and the golden gelu) and erf the double-lane golden kernel. Inputs in [0.01, 8] for pow (x^y of y = 2.2 and 1/2.2: gamma
encoding and decoding),
[-0.99, 0.99] for asin and acos, [-8, 8] for the others; the same runs and
settings as the table above (`bench/cr_speed.py --build {build} --calls {cr_calls} --ops
{pow_ops}`):

{pow_table}

At least as fast as PyTorch 1.13 in every row: {pow_faster}; behind in some row: {pow_behind}.
These rows, and the float-lane rows, prefetch 4 KiB ahead: without, the hardware prefetcher
falls behind their long loop bodies and 16M values cost 1.3-2.3x more per value than 2.6M. The
float-lane rows also fetch their output's lines for writing 4 KiB ahead, so that the stores
seldom wait on a line's read (16M floats, one thread: exp 1.09-1.11x as fast, log 1.02-1.04x;
without either prefetch exp and log ran 1.08-1.12x slower, with the input's alone 1.15-1.25x:
`build/bench/ab_rows --n 16777216`).

### float64 exp, log, expm1, log1p, sigmoid, tanh and erf

Dense float64 rows of these run in vectors on targets with FMA, within 0.51-0.75 ULP
(docs/numerics.md, float64; Notes [float64 exp rows] to [float64 erf rows] in
kernels_simd/unary_f64.cc). The same inputs, shapes and settings as the float32 tables, beside
PyTorch's float64 kernels (`bench/cr_speed.py --build {build} --calls {cr_calls} --f64 --ops
{f64_ops}`):

{f64_table}

At least as fast as PyTorch 1.13 in every row: {f64_faster}{f64_behind}.

### sin, cos and tan beyond 2^18

Arguments beyond 2^18 reduce exactly in double lanes (Note [large trig arguments]), every
target; the float-lane rows hand vectors with a lane beyond 2^14 to the double lanes whole, in
runs of up to 256 values so that consecutive vectors overlap. 2^20 float32 values of |x| in
[2^19, 2^100], one thread, ms per call (`MPSIM_NUM_THREADS=1 /usr/bin/python3 bench/torch_sweep.py --build {build} --filter 2^19`):

{trig_table}

### Special values in rows

+-inf, NaN, out-of-domain and overflowing lanes take their results in the vectors (Note
[special lanes in vectors], `kernels_simd/unary_cr-inl.h`; asin and acos on targets without their
float lanes in Note [asin and acos in double lanes]): a row where they mix with ordinary lanes costs a little more than an ordinary
row, not a pass through the value-by-value path (where sigmoid, silu and softplus of a row with
NaN in every other element take 23.5, 18.1 and 41.6 ms). [2, 320, 64, 64] float32, one
thread, ms; "masked": -inf at every other element of the last dim, the others N(0, 1); "NaN
every other": likewise with NaN; "half negative" and "a third outside [-1, 1]": N(0, 1)
(`MPSIM_NUM_THREADS=1 /usr/bin/python3
bench/torch_sweep.py --build {build} --filter masked`, likewise `--filter "NaN every"`,
`--filter "half negative"` and `--filter outside`):

{special_table}

Every float-lane function, and asin and acos, gives its NaN results in the vector: the input
quieted (x + x), with the sign bit set for sigmoid and softplus (their value-by-value path
takes e^-|x|), and the default NaN where the value-by-value path gives it.

### float16 and bfloat16 unary ops: tables

A long dense float16 or bfloat16 row of a golden unary op (or of a math function without
parameters) looks its results up in a 65536-entry table built once by the row kernel
(Note [16-bit unary tables]; the same bits). Dense rows of abs, neg, relu, square, sqrt,
reciprocal and rsqrt, of any length, skip both: one float operation (an estimate for bfloat16
rsqrt) between the exact widening and the rounding gives the correctly rounded result, or
the bits directly (Note [exact 16-bit unary rows], `kernels_simd/lookup16.cc`).
[2, 320, 64, 64] (rsqrt, sqrt: of |x|), one thread, ms, mpsim / PyTorch 1.13
(`MPSIM_NUM_THREADS=1 /usr/bin/python3
bench/torch_sweep.py --build {build} --filter "16 "`; PyTorch has no float16 CPU kernel for
these: its float32 op on the widened tensor):

{half_table}

bfloat16 sqrt computes one float square root per value, as PyTorch does, and runs level with
it: the square-root unit's rate is the floor (x times the x^-1/2 estimate under the same
rounding test took 0.86 ms). Rows below 16384 values and strided rows of the other ops take
the row kernel (each value in double lanes, rounded once).

Dense float16 and bfloat16 rows of softmax, log_softmax, layer_norm, rms_norm and group_norm
widen to float exactly and run the float rows' SIMD statistics and exp with outputs rounded
once to the 16-bit type (Note [16-bit softmax rows] in `kernels_simd/softmax.cc`, Note [16-bit
normalization rows] in `kernels_simd/norm.cc`), same command, ms, mpsim / PyTorch's float32 op
on the widened tensor: {half_norm}. softmax stays behind: its golden row evaluates exp and the
sum in double lanes (8 values per AVX-512 vector against PyTorch's 16 floats), as float32's
does.

## Softmax, normalizations, reductions, data movement, casts, random numbers

Stable Diffusion 1.5 shapes; ms per call, outputs allocated in both libraries.

{kernels_table}

- **softmax** runs one pass per row for the exp, the sum and the maximum, with exp from a
  2^(j/16) table in double (Note [softmax exp]) and the next row prefetched; its output
  streams. log_softmax and logsumexp share the row kernels.
- **layer_norm, rms_norm and NCHW group_norm** take their statistics in one fused float64 pass
  about a shift, with rows or groups in flight so that no pass waits on a fold (Note
  [pipelined rows], Note [pipelined groups]). **Channels-last group_norm** reads each sample
  twice (no output before its group's statistics), as PyTorch's kernel does ({nhwc_ratio}).
- **Reductions** only read; the leading-dim sum runs lane by lane (Note [lane-major column
  sums]), prod keeps 32 double lanes with their exponents apart (Note [product lanes]).
- **Permute and transpose** run a streamed transpose: bands of 32 input rows, 16 x 16 register
  tiles, streaming stores (Note [streamed transpose]). **cat** passes its whole output's size
  to each part's copy, so large outputs stream. **gather, index_select, flip, pad, tril** copy
  whole runs per row. **randn** is Box-Muller with mpsim's own vectorized double log and cos
  (Note [normal transform]); every random op draws Philox bits 256 at a time.

## matmul, conv2d, attention

ms per call (GFLOP/s). Golden computes one double chain of exact products per output, so its
limit is the float64 peak ({peak_f64} GFLOP/s) and OpenBLAS dgemm its peer in arithmetic; Fast
is a float FMA chain (float32 peak {peak_f32}). PyTorch runs matmul through OpenBLAS, conv2d
through oneDNN, attention as bmm-softmax-bmm with the [2, 8, 4096, 4096] scores in memory.
OpenBLAS runs its {coretype} kernels (OPENBLAS_CORETYPE, bench/torch_env.py) and the peers' idle threads sleep
(Note [idle peers] in `bench/linalg_bench.cc`).

{linalg_table}

![sgemm GFLOP/s against n](img/sgemm.png)

- Fast sgemm runs at {fast_mm_range} of the float32 peak on the square products; {best_peer}.
  Golden runs at {golden_mm_range} of the float64 peak, {golden_vs_dgemm} OpenBLAS dgemm's speed.
- conv2d is an implicit GEMM per image and group on the same kernels (`kernels_simd/conv.cc`);
  depthwise convolutions run on row kernels of their own, channels-last or NCHW with no copy
  (Note [depthwise]). PyTorch / Fast: {conv_range} ({conv_verdict}).
- Attention: {attention_sentence}

## Stable Diffusion fusions

Each fusion beside its composition of mpsim ops (PyTorch 1.13 has none), ms per call; GB/s
counts the fusion's own traffic (`fusion_bench`, best of {fusion_reps} repetitions). A fusion
equals its composition bit for bit (Note [fused rounding]) and skips its intermediate tensors.

{fusion_table}

## Allocator

Peak reserved over peak requested (1 is no waste) and ns per allocation / free, replaying the
shared traces: `mpsim alloc-replay TRACE --allocator NAME --json` (docs/allocator.md). PyTorch's
figure is its own caching allocator's on the recorded run. The peers purge or unmap freed pages,
so later blocks pay page faults that a replay, which does not write to its blocks, does not
show; the buddy allocator keeps freed granules, as a device caching allocator must.

{allocator_table}

![Peak reserved / peak requested per trace and allocator](img/allocator.png)

## Limits

What bounds softmax and the normalizations, whose exp and statistics are float64 (in float,
softmax would lose its 0.5 ULP bound, docs/numerics.md). The arithmetic floor is the FP-port
instructions of the compiled loops at the measured float64 FMA rate ({peak_f64} GFLOP/s =
{fma_rate} G vector FMAs per second): the time if each issued at that rate with no stall.

{floors_table}

- {floor_sentence}
- **layer_norm** (`norm_floor_bench`: {threads} threads, [2, 4096, 320], best of {floor_reps}
  repetitions, one process):

{norm_floor_table}

  `no_dependency` ({no_dep_share} of memcpy's rate) is a floor by construction: a correct
  layer_norm does the same arithmetic and also waits on each row's statistics. mpsim's
  layer_norm has the two-stage structure.
- **Channels-last group_norm** reads each sample (5.2 MiB, more than a core's L2) twice, for
  the statistics and then the output: 1.5 times a copy's bytes, so 67% of the copy rate is its
  ceiling whatever the arithmetic.
- **float32 GEMM** (`gemm_floor_bench`: one thread, best of {floor_reps} repetitions, one
  process; the scratch kernels are the engine's AVX-512 micro-tile written with intrinsics):

{gemm_floor_table}

  The micro-kernel and the cache blocking run at {gemm_tile_share} of the FMA peak with their
  operands in cache, mpsim's matmul at {gemm_mm_share} and conv2d at {gemm_conv_share}: the
  rest of their time goes to what real operands add, packing b (a pass before the tiles start),
  the first reads of a (the convolution's x, read in place at each tap: Note [conv in
  registers]) and of each packed block of b, and writing the output. {big_peer_sentence}
- **Depthwise 3x3** (`gemm_floor_bench`, the same run: one image [1, 320, 64, 64] channels-last,
  9 multiply-adds an output; each scratch loop keeps 8 adjacent outputs of one vector of
  channels in registers with its 9 weights, and reads each x vector once for the taps on it):

{dw_floor_table}

  The arithmetic runs at {dw_l1_share} of the FMA peak on rows in L1. On the image, where the 16
  channels of a vector fill one cache line and the next column's lie 1280 bytes on, the same
  loop reaches {dw_in_place_share} (staged through a dense ring first: {dw_staged_share}), and
  mpsim {dw_mpsim_share}: its channels-last 3x3 kernels have the scratch loop's structure, with
  the image's sizes and strides known only at run time (Note [held weights] in
  `kernels_simd/depthwise_rows-inl.h`). The scratch loop's x is padded, so its rows and out's
  lie at different offsets in their pages. mpsim's x and output have one layout and both start
  a 2 MiB page (Note [huge pages] in `allocator/host_allocator.cc`): each load of x then lies a
  multiple of 4 KiB from an output store just issued (the same pixel, or one 16 pixels on) and
  waits for it (4K aliasing). The scratch loop on such tensors reaches {dw_same_share}, and
  {dw_shifted_share} with the output moved 128 bytes on: that, not the loop, is most of the
  gap to mpsim. A copy of the bytes of the [2, 320, 64, 64] case in the
  table above takes about as long as its multiply-adds at the FMA peak, so the peak is its
  bound: mpsim reaches {dw_bound_share} of it there (the table's "Fast / f32 peak").

Allocator latency and throughput: `allocator_bench` ([allocator.md](allocator.md)); mps launch
overhead: `device_bench` ([device.md](device.md)).
"""


def log(msg):
    print(f"report: {msg}", file=sys.stderr, flush=True)


def ms(t):
    if t is None:
        return "-"
    return f"{t:.1f}" if t >= 100 else f"{t:.2f}" if t >= 1 else f"{t:.3f}"


def ratio(a, b):
    """a / b as '1.23', '-' when either is missing."""
    return f"{a / b:.2f}" if a and b else "-"


def span(values, unit="x"):
    """'lo-hi' of the ratios given (or one value), '-' when none."""
    values = [v for v in values if v]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}{unit}" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f}{unit}"


def pct_span(values):
    values = [v for v in values if v]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{100 * lo:.0f}%" if round(100 * lo) == round(100 * hi) else f"{100 * lo:.0f}-{100 * hi:.0f}%"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def machine():
    model = "unknown cpu"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) / 2**20
    flags = open("/proc/cpuinfo").read()
    isa = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "SSE4"
    osname = "Linux"
    if os.path.exists("/etc/os-release"):
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                osname = line.split("=", 1)[1].strip().strip('"')
    return f"{os.cpu_count()} cores of an {model} ({isa}), {mem:.0f} GiB, {osname}"


# ---------------------------------------------------------------------------------------------
# Running the drivers


def run_elementwise(args):
    pattern = QUICK_PATTERN if args.quick else FULL_PATTERN
    cases, ours, theirs, gbs = compare.measure(args.build, args.threads, args.rounds, args.repeat,
                                               pattern, args.min_time, log)
    best = {}
    for name, values in ours.items():
        best[name] = {"mpsim": min(values), "gbs": gbs.get(name, 0.0)}
    for name, values in theirs.items():
        best.setdefault(name, {})["pytorch"] = min(values)
    # PyTorch runs the same call for unary/<op> and unary_fast/<op>: both rows get its best.
    for op in UNARY:
        names = [n for n in (f"unary/{op}/real_time", f"unary_fast/{op}/real_time")
                 if best.get(n, {}).get("pytorch")]
        for n in names:
            best[n]["pytorch"] = min(best[m]["pytorch"] for m in names)
    return best


def run_linalg(args):
    filters = QUICK_LINALG if args.quick else [""]
    best, order, peak = {}, [], {}
    for f in filters:
        b, o, p = linalg_compare.measure(args.build, args.threads, args.alternations,
                                         args.linalg_rounds, f, log)
        best.update(b)
        order += [k for k in o if k not in order]
        peak.update(p)
    return best, order, peak


def run_gbench(args, binary, reps):
    """Every repetition of a Google Benchmark binary: {name: [(ms, GB/s), ...]}."""
    exe = os.path.join(args.build, "bench", binary)
    cmd = [exe, "--benchmark_format=json", f"--benchmark_repetitions={reps}"]
    if args.min_time:
        cmd.append(f"--benchmark_min_time={args.min_time}")
    env = dict(os.environ, MPSIM_NUM_THREADS=str(args.threads))
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    runs = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") == "iteration":
            runs.setdefault(b["run_name"], []).append((b["real_time"], b.get("GB/s", 0.0)))
    return runs


def run_gemm_floor(args, reps):
    """gemm_floor_bench on one thread: {name: best GFLOP/s}."""
    exe = os.path.join(args.build, "bench", "gemm_floor_bench")
    cmd = [exe, "--benchmark_format=json", f"--benchmark_repetitions={reps}"]
    if args.min_time:
        cmd.append(f"--benchmark_min_time={args.min_time}")
    env = dict(os.environ, MPSIM_NUM_THREADS="1")
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") == "iteration" and "FLOP/s" in b:
            name = b["run_name"].removeprefix("BM_").removesuffix("/real_time")
            rates[name] = max(rates.get(name, 0.0), b["FLOP/s"] / 1e9)
    return rates


def gemm_floor_rows(rates, cases=GEMM_FLOORS):
    peak = rates.get("fma_registers")
    rows = [[f"`{key}`", label, f"{rates[key]:.0f}", f"{100 * rates[key] / peak:.0f}%" if peak else "-"]
            for key, label in cases if key in rates]
    text = table(["case", "what it runs", "GFLOP/s", "of the FMA peak"], rows)
    return "\n".join("  " + line for line in text.splitlines())


def best_of(runs, name):
    r = runs.get(name)
    return min(r) if r else (None, None)


def traces_dir(args):
    return args.traces or os.path.join(ROOT, "..", "shared", "traces")


def run_allocator(args):
    cli = os.path.join(args.build, "tools", "mpsim")
    env = dict(os.environ, GLIBC_TUNABLES="glibc.rtld.optional_static_tls=16384")
    results = {}
    for trace, _ in TRACES:
        path = os.path.join(traces_dir(args), trace)
        if not os.path.exists(path):
            log(f"no trace at {path}: allocator rows left out")
            continue
        for a in (["buddy", "caching"] if args.quick else ALLOCATORS):
            p = subprocess.run([cli, "alloc-replay", path, "--allocator", a, "--json"], env=env,
                               capture_output=True, text=True)
            lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
            if p.returncode != 0 or not lines:
                log(f"alloc-replay {trace} --allocator {a}: {p.stderr.strip()[:200]}")
                continue
            results[(trace, a)] = json.loads(lines[-1])
    return results


def flat_replay(doc):
    """One allocator's figures from `mpsim alloc-replay --json`: the trace's fields (events,
    peak_requested_bytes, ...) with those of its entry in "allocators" (ratio, ns_per_alloc,
    peak_reserved_bytes, ...)."""
    if "allocators" not in doc:
        return doc
    flat = {k: v for k, v in doc.items() if k != "allocators"}
    flat.update(doc["allocators"][0])
    return flat


def pytorch_trace_ratios(args):
    """PyTorch's peak reserved / peak allocated per trace, from the traces' README table."""
    ratios = {}
    readme = os.path.join(traces_dir(args), "README.md")
    if os.path.exists(readme):
        for line in open(readme):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and cells[0].endswith(".trace"):
                try:
                    ratios[cells[0]] = float(cells[-1])
                except ValueError:
                    pass
    return ratios


# ---------------------------------------------------------------------------------------------
# Tables


def copy_rate(e, nbytes):
    """GB/s of the copy reference whose footprint is nearest nbytes (log scale)."""
    refs = [(e[c]["gbs"], e[c]["gbs"] * e[c]["mpsim"] * 1e6) for c, _ in COPIES
            if c in e and e[c].get("gbs")]
    if not refs or not nbytes:
        return None
    return min(refs, key=lambda r: abs(math.log(r[1] / nbytes)))[0]


def of_copy(e, name):
    """The op's share of the copy rate: mpsim's GB/s over the nearest copy reference's."""
    r = e.get(name)
    if not r or not r.get("gbs"):
        return None
    rate = copy_rate(e, r["gbs"] * r["mpsim"] * 1e6)
    return r["gbs"] / rate if rate else None


def unary_rows(e):
    rows, plot = [], []
    for label, name, eigen in [("add, broadcast [2,320,64,64] + [320,1,1]", "BM_add_broadcast", None),
                               ("mul", "BM_mul", "eigen_unary/mul"), ("copy (clone)", "BM_copy", None)]:
        r = e.get(f"{name}/real_time")
        if not r:
            continue
        ei = e.get(f"{eigen}/real_time", {}).get("mpsim") if eigen else None
        share = of_copy(e, f"{name}/real_time")
        rows.append([label, ms(r["mpsim"]), "", ms(r.get("pytorch")), ms(ei),
                     ratio(r.get("pytorch"), r["mpsim"]), "", f"{100 * share:.0f}%" if share else "-"])
        plot.append((label.split(",")[0].split(" (")[0], r.get("pytorch"), r["mpsim"], None))
    for op in UNARY:
        g = e.get(f"unary/{op}/real_time")
        f = e.get(f"unary_fast/{op}/real_time")
        if not g and not f:
            continue
        pt = (g or f).get("pytorch")
        ei = e.get(f"eigen_unary/{op}/real_time", {}).get("mpsim")
        share = max([of_copy(e, f"{p}/{op}/real_time") or 0 for p in ("unary", "unary_fast")])
        rows.append([op.replace("gelu_tanh", "gelu(tanh)"), ms(g["mpsim"]) if g else "-",
                     ms(f["mpsim"]) if f else "", ms(pt), ms(ei),
                     ratio(pt, g["mpsim"]) if g else "-", ratio(pt, f["mpsim"]) if f else "",
                     f"{100 * share:.0f}%" if share else "-"])
        plot.append((op, pt, g["mpsim"] if g else None, f["mpsim"] if f else None))
    header = ["op", "Golden", "Fast", "PyTorch", "Eigen (1 thread)", "PyTorch / Golden",
              "PyTorch / Fast", "of copy (faster mpsim)"]
    return table(header, rows), plot


def kernels_rows(e):
    rows, plot = [], []
    for name, label, shape in KERNELS:
        r = e.get(name)
        if not r:
            continue
        share = of_copy(e, name)
        cell = f"{100 * share:.0f}%" if share else "-"
        if name in READ_ONLY and share:
            cell += " (reads)"
        rows.append([label, shape, ms(r["mpsim"]), ms(r.get("pytorch")),
                     ratio(r.get("pytorch"), r["mpsim"]),
                     f"{r['gbs']:.1f}" if r.get("gbs") else "-", cell])
        plot.append((label, r.get("pytorch"), r["mpsim"], None))
    header = ["op", "shape", "mpsim", "PyTorch", "PyTorch / mpsim", "mpsim GB/s", "of copy"]
    return table(header, rows), plot


def linalg_rows(best, order, peak):
    cases = []
    for c, _ in order:
        if c != "peak" and c not in cases:
            cases.append(c)

    def cell(c, impl):
        r = best.get((c, impl))
        return f"{ms(r['ms'])} ({r['gflops']:.0f})" if r else ""

    rows = []
    for c in cases:
        g, f, pt = best.get((c, "mpsim golden")), best.get((c, "mpsim fast")), best.get((c, "pytorch"))
        rows.append([c, cell(c, "mpsim golden"), cell(c, "mpsim fast"), cell(c, "openblas"),
                     cell(c, "openblas dgemm"), cell(c, "onednn"), cell(c, "eigen"),
                     cell(c, "pytorch"), ratio(pt and pt["ms"], f and f["ms"]),
                     f"{100 * g['gflops'] / peak['fma f64']:.0f}%" if g and peak.get("fma f64") else "-",
                     # float64's Fast is its Golden double chain: no float32 share
                     f"{100 * f['gflops'] / peak['fma f32']:.0f}%"
                     if f and peak.get("fma f32") and not c.startswith("f64 ") else "-"])
    header = ["case", "Golden", "Fast", "OpenBLAS", "OpenBLAS dgemm", "oneDNN", "Eigen",
              "PyTorch", "PyTorch / Fast", "Golden / f64 peak", "Fast / f32 peak"]
    return table(header, rows)


def fusion_rows(runs):
    rows = []
    for key, label, shape in FUSIONS:
        comp, _ = best_of(runs, f"BM_{key}/fused:0/real_time")
        fused, gbs = best_of(runs, f"BM_{key}/fused:1/real_time")
        if fused is None:
            continue
        rows.append([label, shape, ms(comp), ms(fused), ratio(comp, fused), f"{gbs:.1f}"])
    return table(["fusion", "shape", "composition", "fused", "composition / fused", "fused GB/s"], rows)


def allocator_rows(results, pytorch):
    rows = []
    present = [(t, label) for t, label in TRACES if any(k[0] == t for k in results)]
    if pytorch:
        rows.append(["PyTorch CUDA caching allocator"] +
                    sum([[f"{pytorch[t]:.3f}" if t in pytorch else "-", "-"] for t, _ in present], []))
    for a in ALLOCATORS:
        cells = []
        for t, _ in present:
            r = results.get((t, a))
            cells += [f"{r['ratio']:.4f}", f"{r['ns_per_alloc']:.0f} / {r['ns_per_free']:.0f}"] if r \
                else ["-", "-"]
        if any(c != "-" for c in cells):
            rows.append([ALLOCATOR_LABELS[a]] + cells)
    header = ["allocator"] + sum([[f"{label} ratio", f"{label} ns alloc / free"] for _, label in present], [])
    return table(header, rows)


def floors_rows(e, peak):
    rows = []
    rate = peak.get("fma f64", 0) / 16 * 1e9  # 8 double lanes x 2 flops per vector FMA
    floors = {}
    for label, name, parts, instr, n in FLOORS:
        r = e.get(name)
        floor = n / 8 * instr / rate * 1e3 if rate else None
        copy = None
        if r and r.get("gbs"):
            nbytes = r["gbs"] * r["mpsim"] * 1e6
            cr = copy_rate(e, nbytes)
            copy = nbytes / cr / 1e6 if cr else None
        floors[name] = (floor, copy, r and r["mpsim"])
        rows.append([label, f"{instr} ({parts})", ms(floor), ms(copy), ms(r and r["mpsim"]),
                     f"{100 * floor / copy:.0f}%" if floor and copy else "-"])
    header = ["op", "FP-port instructions per 8", "arithmetic floor ms", "copy of its bytes ms",
              "mpsim ms", "floor / copy"]
    return table(header, rows), floors


def norm_floor_rows(runs):
    rows = []
    memcpy, _ = best_of(runs, "BM_copy_memcpy/real_time")
    shares = {}
    for key, label in NORM_FLOORS:
        t, _ = best_of(runs, f"BM_{key}/real_time")
        if t is None:
            continue
        shares[key] = memcpy / t if memcpy else None
        rows.append([f"`{key}`", label, ms(t), f"{100 * memcpy / t:.0f}%" if memcpy else "-"])
    text = table(["case", "what it runs", "ms", "of memcpy's rate"], rows)
    return "\n".join("  " + line for line in text.splitlines()), shares


def reflow(text, width=96):
    """Rewraps the prose paragraphs and bullets that the filled-in values lengthened; tables,
    code blocks, headings and images stay as they are."""
    out = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if any(line.lstrip().startswith(("|", "#", "![")) or line.startswith("    ") for line in lines):
            out.append(block)
            continue
        items, item = [], []  # (indent, words) per bullet or paragraph
        for line in lines:
            if line.startswith("- ") and item:
                items.append(item)
                item = []
            item.append(line)
        items.append(item)
        wrapped = []
        for item in items:
            indent = " " * (len(item[0]) - len(item[0].lstrip()))  # a list item's continuation
            words = " ".join(line.strip() for line in item)
            bullet = words.startswith("- ")
            wrapped += textwrap.wrap(words, width, initial_indent=indent,
                                     subsequent_indent=indent + ("  " if bullet else ""),
                                     break_on_hyphens=False, break_long_words=False)
        out.append("\n".join(wrapped))
    return "\n\n".join(out)


# ---------------------------------------------------------------------------------------------
# Plots


def plot_ops(unary_plot, kernels_plot, path, threads):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [("elementwise and unary, 16M float32", unary_plot),
              ("softmax, norms, reductions, movement, casts, random", kernels_plot)]
    rows = max(len(p) for _, p in panels) or 1
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.9 + 0.24 * rows))
    ratios = [d[1] / x for _, data in panels for d in data if d[1] for x in d[2:] if x]
    lo = min([0.5] + ratios) / 1.3
    hi = max([2.0] + ratios) * 1.3
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100) if lo <= t <= hi]
    for ax, (title, data) in zip(axes, panels):
        data = [d for d in data if d[1]]
        y = list(range(len(data)))[::-1]
        has_fast = any(d[3] for d in data)
        h = 0.4 if has_fast else 0.7
        # Bars start at 1 (level): right for ops where mpsim is faster, left where slower.
        golden = [d[1] / d[2] if d[2] else 1 for d in data]
        ax.barh([v + (h / 2 if has_fast else 0) for v in y], [g - 1 for g in golden], left=1,
                height=h, label="mpsim (Golden)" if has_fast else "mpsim", color="#3b75af")
        if has_fast:
            fast = [d[1] / d[3] if d[3] else 1 for d in data]
            ax.barh([v - h / 2 for v in y], [f - 1 for f in fast], left=1, height=h,
                    label="mpsim Fast", color="#ef8636")
        ax.axvline(1, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks], fontsize=7)
        ax.minorticks_off()
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.set_yticks(y)
        ax.set_yticklabels([d[0] for d in data], fontsize=7)
        ax.set_ylim(-0.7, len(data) - 0.3)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("PyTorch time / mpsim time (right of 1: mpsim faster)", fontsize=8)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"Time per op, mpsim vs PyTorch 1.13, {threads} threads (bench/report.py)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_allocator(results, pytorch, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    present = [(t, label) for t, label in TRACES if any(k[0] == t for k in results)]
    allocs = [a for a in ALLOCATORS if any((t, a) in results for t, _ in present)]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / max(1, len(allocs) + (1 if pytorch else 0))
    series = ([("PyTorch CUDA caching", [pytorch.get(t) for t, _ in present])] if pytorch else []) + \
        [(ALLOCATOR_LABELS[a], [results[(t, a)]["ratio"] if (t, a) in results else None for t, _ in present])
         for a in allocs]
    for i, (label, values) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(present))]
        ax.bar([x for x, v in zip(xs, values) if v], [v for v in values if v], width=width, label=label)
    ax.set_xticks(range(len(present)))
    ax.set_xticklabels([label for _, label in present])
    ax.set_ylim(0.98, max([v for _, vs in series for v in vs if v] + [1.05]) * 1.05)
    ax.set_ylabel("peak reserved / peak requested")
    ax.set_title("Allocator overhead on the shared traces (mpsim alloc-replay)", fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------


def run_cr(args):
    """The float-lane table, the pow group's and their in-cache runs (cr_speed.py)."""
    ops = ["exp"] if args.quick else CR_OPS
    pow_ops = ["pow_2.2"] if args.quick else POW_OPS
    f64_ops = ["log"] if args.quick else cr_speed.F64_OPS
    log("cr_speed: " + ",".join(ops + pow_ops) + "; float64 " + ",".join(f64_ops))
    cache = cr_speed.cache_runs(args.build, sorted(set(ops + CACHE_OPS + LANE_RATE_OPS)))
    return {"ops": ops, "pow_ops": pow_ops, "calls": args.cr_calls, "cache": cache,
            "rows": cr_speed.measure(args.build, args.cr_calls, ops, log),
            "pow_rows": cr_speed.measure(args.build, args.cr_calls, pow_ops, log),
            "f64_ops": f64_ops,
            "f64_rows": cr_speed.measure(args.build, args.cr_calls, f64_ops, log, f64=True)}


def run_torch_sweep(args, substring):
    """{name: (mpsim ms, PyTorch ms)} of bench/torch_sweep.py's rows containing `substring`."""
    log(f"torch_sweep --filter {substring!r}")
    out = subprocess.run([sys.executable, os.path.join(HERE, "torch_sweep.py"), "--build",
                          args.build, "--filter", substring],
                         env=dict(os.environ, MPSIM_NUM_THREADS="1"), check=True,
                         capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^(.*?)\s+mpsim\s+([\d.]+)\s+torch\s+([\d.]+)", line)
        if m:
            rows[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="the build directory (scripts/build.sh -DMPSIM_BUILD_BENCH=ON)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="a few cases, once each: checks the script")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--traces", default="", help="the shared traces (default: ../shared/traces)")
    ap.add_argument("--data", default="", help="where the raw measurements go (default: BUILD/report.json)")
    ap.add_argument("--from-data", default="", help="rewrite the page from saved measurements, measuring nothing")
    ap.add_argument("--remeasure", choices=["cr"], default="",
                    help="measure one section again (cr: the correctly rounded tables, "
                    "bench/cr_speed.py), keep the others from --data, and rewrite the page")
    args = ap.parse_args()
    args.data = args.data or os.path.join(args.build, "report.json")
    # The run's sizes: full rounds for the report, one of everything for --quick.
    args.rounds, args.repeat, args.min_time = (1, 5, 0.05) if args.quick else (3, 20, 0.2)
    args.alternations, args.linalg_rounds = (1, 1) if args.quick else (2, 3)
    args.cr_calls = 3 if args.quick else 21
    reps = 1 if args.quick else 5
    needed = ["bench/elementwise_bench", "bench/linalg_bench", "bench/fusion_bench",
              "bench/norm_floor_bench", "bench/gemm_floor_bench", "tools/mpsim",
              "python/mpsim"]  # torch_sweep.py's rows: -DMPSIM_BUILD_PYTHON=ON
    for exe in [] if args.from_data or args.remeasure else needed:
        if not os.path.exists(os.path.join(args.build, exe)):
            sys.exit(f"report.py: {args.build}/{exe} is missing: run "
                     f"MPSIM_BUILD_DIR={args.build} scripts/build.sh -DMPSIM_BUILD_BENCH=ON "
                     "-DMPSIM_BUILD_PYTHON=ON first")
    if args.from_data:
        with open(args.from_data) as f:
            data = json.load(f)
    elif args.remeasure:
        with open(args.data) as f:
            data = json.load(f)
        t0 = time.time()
        data["cr"] = run_cr(args)
        data.setdefault("remeasured", {})["cr"] = (time.time() - t0) / 60
        with open(args.data, "w") as f:
            json.dump(data, f)
    else:
        data = measure_all(args, reps)
        os.makedirs(os.path.dirname(os.path.abspath(args.data)), exist_ok=True)
        with open(args.data, "w") as f:
            json.dump(data, f)
    render(args, data)


def measure_all(args, reps):
    """Runs every driver once; returns what render() needs, as JSON-able data."""
    t0 = time.time()
    e = run_elementwise(args)
    best, order, peak = run_linalg(args)
    log("fusion_bench")
    fusion = run_gbench(args, "fusion_bench", reps)
    log("norm_floor_bench")
    floor_runs = run_gbench(args, "norm_floor_bench", reps)
    log("gemm_floor_bench")
    gemm_floor = run_gemm_floor(args, reps)
    log("alloc-replay")
    alloc = run_allocator(args)
    cr = run_cr(args)
    sweep = {**run_torch_sweep(args, "2^19"), **run_torch_sweep(args, "16 ")}
    for f in SPECIAL_FILTERS:
        sweep.update(run_torch_sweep(args, f))
    return {"elementwise": e, "linalg": [[k[0], k[1], best[k]] for k in order], "peak": peak,
            "fusion": fusion, "norm_floor": floor_runs, "gemm_floor": gemm_floor,
            "allocator": [[t, a, r] for (t, a), r in alloc.items()],
            "pytorch_allocator": pytorch_trace_ratios(args), "cr": cr, "torch_sweep": sweep,
            "minutes": (time.time() - t0) / 60,
            "rounds": args.rounds, "repeat": args.repeat, "reps": reps, "threads": args.threads}


def and_words(items):
    items = list(items)
    if not items:
        return "none"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def cr_verdicts(rows):
    """(ops at least as fast as PyTorch in every row, "op lo-hi" for the others), in order."""
    ratios = {}
    for op, _, _, t_golden, _, t_torch in rows:
        ratios.setdefault(op, []).append(t_torch / t_golden)
    faster = [op for op, r in ratios.items() if min(r) >= 1]
    behind = [f"{op} {span([min(r)])}" + (f" (up to {max(r):.2f}x)" if max(r) >= 1 else "")
              for op, r in ratios.items() if min(r) < 1]
    return faster, behind


def cr_values(data, build):
    """The template's values for the correctly rounded sections (cr_speed.py, torch_sweep.py)."""
    cr = data.get("cr") or {"ops": [], "pow_ops": [], "rows": [], "pow_rows": [], "cache": {},
                            "calls": 0}
    sweep = data.get("torch_sweep", {})
    ops, rows, cache = cr["ops"], [tuple(r) for r in cr["rows"]], cr["cache"]
    rates = {name.split("/")[1]: c["slow_lanes"] for name, c in cache.items()
             if name.startswith("unary_cache/") and c["slow_lanes"] is not None
             and name.split("/")[1] in ops}
    faster, behind = cr_verdicts(rows)
    pow_faster, pow_behind = cr_verdicts([tuple(r) for r in cr["pow_rows"]])
    f64_rows = [tuple(r) for r in cr.get("f64_rows", [])]
    f64_faster, f64_behind = cr_verdicts(f64_rows)
    sd_gain = [t_golden / t_fast for _, shape, _, t_golden, t_fast, _ in rows
               if t_fast and shape.startswith("[")]
    fast_ops = list(dict.fromkeys(op for op, shape, _, _, t_fast, _ in rows
                                  if t_fast and shape.startswith("[")))

    def cache_ms(kind, op):
        c = cache.get(f"{kind}/{op}/real_time")
        return ms(c["ms"]) if c else "-"

    def slow_rate(op):
        c = cache.get(f"unary_cache/{op}/real_time")
        return (f"{100 * c['slow_lanes']:.2f}% (`unary_cache/{op}`)"
                if c and c.get("slow_lanes") is not None else "-")

    def slow_share(op):
        c = cache.get(f"unary_cr_slow/{op}/real_time")
        return f"{100 * c['slow_lanes']:.0f}%" if c and c.get("slow_lanes") is not None else "-"
    cache_sentence = ("golden " + ", ".join(f"{op} {cache_ms('unary_cache', op)}" for op in CACHE_OPS)
                      + "; Fast " + ", ".join(f"{op} {cache_ms('unary_fast_cache', op)}"
                                             for op in CACHE_OPS)
                      + f"; `unary_cr_slow/exp`, inputs whose e^x lies within 2^-33 of a boundary"
                      f" ({slow_share('exp')} of the lanes fail), {cache_ms('unary_cr_slow', 'exp')},"
                      " the same results.")

    def sweep_table(names, label):
        out = []
        for name in names:
            if name in sweep:
                m, t = sweep[name]
                out.append([label(name), f"{m:.3f}", f"{t:.3f}", f"{t / m:.2f}"])
        return out
    trig = sweep_table(TRIG_ROWS, lambda n: n.split()[0])
    special = sweep_table([n for n in sweep if any(f in n for f in SPECIAL_FILTERS)],
                          lambda n: n.replace("exp (masked: -inf every other)", "exp (masked)"))
    half = sweep_table(HALF_ROWS, lambda n: n.replace("bf16 ", "bfloat16 ").replace(
        "f16 ", "float16 ").replace("(torch f32)", "(PyTorch float32)"))
    short = [o for o in ops if o in UNARY]
    return dict(
        cr_count=len(ops), cr_list=and_words(ops), cr_short_list=and_words(short),
        cr_calls=cr["calls"], cr_table=cr_speed.table(rows),
        cr_rates=cr_speed.rates_sentence(rates, ops), cr_faster=and_words(faster),
        cr_behind=and_words(behind),
        cr_rate_range=(f"{100 * min(rates.values()):.2f}-{100 * max(rates.values()):.2f}%"
                       if rates else "-"),
        fast_gain=span(sd_gain), fast_ops=and_words(fast_ops), cache_sentence=cache_sentence,
        pow_ops=",".join(cr["pow_ops"]), pow_table=cr_speed.table([tuple(r) for r in cr["pow_rows"]]),
        pow_faster=and_words(pow_faster), pow_behind=and_words(pow_behind),
        pow_slow=slow_rate("pow_1.5"), gelu_slow=slow_rate("gelu"), asin_slow=slow_rate("asin"),
        acos_slow=slow_rate("acos"),
        f64_ops=",".join(cr.get("f64_ops", [])), f64_table=cr_speed.table(f64_rows, fast=False),
        f64_faster=and_words(f64_faster),
        f64_behind=f"; behind in some row: {and_words(f64_behind)}" if f64_behind else "",
        trig_table=table(["op", "Golden", "PyTorch", "PyTorch / Golden"], trig),
        half_table=table(["op", "mpsim", "PyTorch", "PyTorch / mpsim"], half),
        special_table=(table(["op", "mpsim", "PyTorch", "PyTorch / mpsim"], special) if special
                       else "(not measured in this run)"),
        half_norm="; ".join(f"{name.split(' (')[0].replace('f16 ', 'float16 ')} {m:.2f} against "
                            f"{t:.2f} ({t / m:.2f}x)"
                            for name, (m, t) in sweep.items()
                            if name in ("f16 layer_norm (torch f32)", "f16 softmax (torch f32)")))


def render(args, data):
    e, peak, fusion, floor_runs = data["elementwise"], data["peak"], data["fusion"], data["norm_floor"]
    order = [(c, i) for c, i, _ in data["linalg"]]
    best = {(c, i): r for c, i, r in data["linalg"]}
    alloc = {(t, a): flat_replay(r) for t, a, r in data["allocator"]}
    pytorch_alloc, threads, reps = data["pytorch_allocator"], data["threads"], data["reps"]
    img = os.path.join(os.path.dirname(os.path.abspath(args.out)), "img")
    os.makedirs(img, exist_ok=True)
    unary_table, unary_plot = unary_rows(e)
    kernels_table, kernels_plot = kernels_rows(e)
    plot_ops(unary_plot, kernels_plot, os.path.join(img, "ops_vs_pytorch.png"), threads)
    linalg_compare.plot(best, peak, threads, os.path.join(img, "sgemm.png"), "bench/report.py")
    plot_allocator(alloc, pytorch_alloc, os.path.join(img, "allocator.png"))

    def r(name):
        x = e.get(name)
        return x["pytorch"] / x["mpsim"] if x and x.get("pytorch") else None

    square = list(dict.fromkeys(c for c, _ in order
                                if c.startswith("mm ") and len(set(c[3:].split("x"))) == 1))

    def mm_share(impl, p):
        return [best[(c, impl)]["gflops"] / peak[p] for c in square if (c, impl) in best and peak.get(p)]

    peers = {"openblas": "OpenBLAS", "onednn": "oneDNN", "eigen": "Eigen", "pytorch": "PyTorch"}
    peer_means = {i: sum(mm_share(i, "fma f32")) / len(mm_share(i, "fma f32"))
                  for i in peers if mm_share(i, "fma f32")}
    if peer_means:
        top = max(peer_means, key=peer_means.get)
        best_peer = f"the fastest peer is {peers[top]} ({pct_span(mm_share(top, 'fma f32'))})"
    else:
        best_peer = "no peer ran"
    att = "attention 2x8x4096x40"
    if (att, "mpsim fast") in best and (att, "pytorch") in best:
        g, f, pt = best.get((att, "mpsim golden")), best[(att, "mpsim fast")], best[(att, "pytorch")]
        attention_sentence = (
            f"PyTorch / mpsim {pt['ms'] / f['ms']:.2f} (Fast)"
            + (f" and {pt['ms'] / g['ms']:.2f} (Golden). " if g else ". ")
            + "mpsim streams blocks of 192 keys through an online softmax (Note [attention "
            "numerics]) and keeps no score matrix: about 13 MiB beyond its inputs and output "
            "against 1 GiB (`linalg_bench --attention-memory`).")
    else:
        attention_sentence = "not measured in this run."
    golden_vs_dgemm = span([best[(c, "mpsim golden")]["gflops"] / best[(c, "openblas dgemm")]["gflops"]
                            for c in square if (c, "mpsim golden") in best and (c, "openblas dgemm") in best])
    floors_table, floors = floors_rows(e, peak)
    known = [(label.split(" [")[0], floors[name]) for label, name, _, _, _ in FLOORS
             if name in floors and all(floors[name])]
    def and_list(items):
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]

    if known:
        pcts = [f"{100 * fl / cp:.0f}%" for _, (fl, cp, _) in known]
        parts = [f"{pcts[0]} of the copy's time for {known[0][0]}"] + \
            [f"{pct} for {op}" for pct, (op, _) in zip(pcts[1:], known[1:])]
        floor_sentence = (f"The floor is {and_list(parts)}; mpsim runs at "
                          f"{and_list([f'{ours / fl:.1f}x' for _, (fl, _, ours) in known])} its floor.")
    else:
        floor_sentence = "The floors were not measured in this run."
    conv = [best[(c, "pytorch")]["ms"] / best[(c, "mpsim fast")]["ms"] for c in dict.fromkeys(c for c, _ in order)
            if c.startswith(("conv", "depthwise")) and (c, "pytorch") in best and (c, "mpsim fast") in best]
    conv_verdict = ("mpsim is faster on every shape" if conv and min(conv) > 1.1 else
                    "oneDNN, through PyTorch, is faster on every shape" if conv and max(conv) < 0.9 else
                    "neither leads on every shape")
    norm_floor_table, shares = norm_floor_rows(floor_runs)
    gemm_floor = data.get("gemm_floor", {})
    big = "mm 4096x4096x1024"
    big_rates = {peers_name: best[(big, impl)]["gflops"] for impl, peers_name in
                 (("openblas", "OpenBLAS"), ("onednn", "oneDNN")) if (big, impl) in best}
    big_peer_sentence = ""
    mine = best.get((big, "mpsim fast"))
    if big_rates and mine and peak.get("fma f32"):
        top_peer = max(big_rates, key=big_rates.get)
        theirs, ours = big_rates[top_peer] / peak["fma f32"], mine["gflops"] / peak["fma f32"]
        big_peer_sentence = (
            f"At 4096 x 4096 x 1024 (the table above) {top_peer} runs at {100 * theirs:.0f}% of the "
            f"float32 peak and mpsim at {100 * ours:.0f}%: " +
            ("the peer hides more of those costs behind its arithmetic." if theirs > ours else
             "mpsim keeps up with the fastest peer there."))

    def share(rates, key):
        peak_rate = rates.get("fma_registers")
        return rates[key] / peak_rate if peak_rate and key in rates else None

    build_command = ("" if args.build == "build" else f"MPSIM_BUILD_DIR={shlex.quote(args.build)} ") + \
        "scripts/build.sh -DMPSIM_BUILD_BENCH=ON -DMPSIM_BUILD_PYTHON=ON"
    command = "/usr/bin/python3 bench/report.py" + \
        (f" --build {shlex.quote(args.build)}" if args.build != "build" else "") + \
        (f" --threads {threads}" if threads != 2 else "")
    copy = e.get("BM_copy/real_time", {})
    copy_sd = e.get("BM_copy_sd/real_time", {})
    minutes = round(data["minutes"])
    again = data.get("remeasured", {})
    remeasured = "".join(
        f" The correctly rounded tables come from a later run of that section alone "
        f"(`{command} --remeasure cr`, {again['cr']:.1f} minutes)." if "cr" in again else "")
    values = dict(
        build_command=build_command, command=command, remeasured=remeasured,
        minutes=f"{max(1, minutes)} minute" + ("s" if minutes > 1 else ""),
        machine=machine(), threads=threads, build=args.build, rounds=data["rounds"],
        aten=os.environ.get("ATEN_CPU_CAPABILITY", "unset"),
        coretype=os.environ.get("OPENBLAS_CORETYPE", "unset"),
        repeat=data["repeat"],
        copy_gbs=f"{copy.get('gbs', 0):.0f}", copy_sd_gbs=f"{copy_sd.get('gbs', 0):.0f}",
        copy_ms=ms(copy.get("mpsim")),
        peak_f32=f"{peak.get('fma f32', 0):.0f}", peak_f64=f"{peak.get('fma f64', 0):.0f}",
        fma_rate=f"{peak.get('fma f64', 0) / 16:.1f}",
        unary_table=unary_table, kernels_table=kernels_table,
        memory_ops=", ".join(MEMORY_BOUND_UNARY + ["mul", "copy"]),
        memory_range=span([r(f"unary/{o}/real_time") for o in MEMORY_BOUND_UNARY] +
                          [r("BM_mul/real_time"), r("BM_copy/real_time")]),
        add_ratio=span([r("BM_add_broadcast/real_time")]),
        golden_range=span([r(f"unary/{o}/real_time") for o in
                           ["exp", "log", "sigmoid", "silu", "gelu", "sin", "cos", "log1p", "softplus"]]),
        gelu_range=span([r("unary/gelu/real_time")] +
                        [row[5] / row[3] for row in (data.get("cr") or {}).get("pow_rows", [])
                         if row[0] == "gelu"]),
        erf_range=span([r("unary/erf/real_time")] +
                       [row[5] / row[3] for row in (data.get("cr") or {}).get("pow_rows", [])
                        if row[0] == "erf"]),
        fast_range=span([r(f"unary_fast/{o}/real_time") for o in UNARY]),
        nhwc_ratio="PyTorch / mpsim " + span([r("group_norm_case/nhwc/real_time")], unit=""),
        linalg_table=linalg_rows(best, order, peak),
        fast_mm_range=pct_span(mm_share("mpsim fast", "fma f32")), best_peer=best_peer,
        golden_mm_range=pct_span(mm_share("mpsim golden", "fma f64")),
        golden_vs_dgemm=golden_vs_dgemm, attention_sentence=attention_sentence,
        conv_range=span(conv), conv_verdict=conv_verdict,
        fusion_table=fusion_rows(fusion), fusion_reps=reps,
        allocator_table=allocator_rows(alloc, pytorch_alloc),
        floors_table=floors_table, floor_sentence=floor_sentence,
        norm_floor_table=norm_floor_table, floor_reps=reps,
        gemm_floor_table=gemm_floor_rows(gemm_floor),
        dw_floor_table=gemm_floor_rows(gemm_floor, DEPTHWISE_FLOORS),
        dw_l1_share=pct_span([share(gemm_floor, "dw_l1")]),
        dw_in_place_share=pct_span([share(gemm_floor, "dw_in_place")]),
        dw_staged_share=pct_span([share(gemm_floor, "dw_staged")]),
        dw_same_share=pct_span([share(gemm_floor, "dw_same_layout")]),
        dw_shifted_share=pct_span([share(gemm_floor, "dw_same_layout_out_shifted")]),
        dw_mpsim_share=pct_span([share(gemm_floor, "mpsim_depthwise")]),
        dw_bound_share=pct_span([best[(c, impl)]["gflops"] / peak["fma f32"] for c, impl in order
                                 if c.startswith("depthwise") and impl == "mpsim fast" and peak.get("fma f32")]),
        gemm_tile_share=pct_span([share(gemm_floor, "tile_hot")]),
        gemm_mm_share=pct_span([share(gemm_floor, "mpsim_mm")]),
        gemm_conv_share=pct_span([share(gemm_floor, "mpsim_conv3x3")]),
        big_peer_sentence=big_peer_sentence,
        no_dep_share=pct_span([shares.get("no_dependency")]),
        **cr_values(data, args.build),
    )
    with open(args.out, "w") as f:
        f.write(reflow(TEMPLATE.format(**values)))
    log(f"wrote {args.out} and {img}/{{ops_vs_pytorch,sgemm,allocator}}.png "
        f"(measured in {data['minutes']:.1f} minutes)")


if __name__ == "__main__":
    main()
