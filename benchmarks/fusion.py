"""Elementwise fusion time on long chains: `cortex-fuse-linalg-elementwise` must scale near-linearly.

    python benchmarks/fusion.py                # chains of 1k, 2k, 4k elementwise generics
    python benchmarks/fusion.py --sizes 250 500 --pairwise   # also the one-producer-at-a-time pattern

A chain of n cortex elementwise ops (relu, add, mul, sub on 4x4 f32, each
using the previous result) is lowered once per size; then the pass runs on a
fresh clone per repeat, sizes round-robin so noise spreads over all of them.
`--pairwise` adds the pattern-by-pattern fusion (`FuseElementwiseProducer`
under xDSL's greedy walker, the algorithm the pass had before), which is
quadratic: keep its sizes small. Prints medians and size ratios (linear = 2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

import cortex
from cortex.dialects import tensor_ops as t
from cortex.dialects.base import tensor
from cortex.linalg_opt.fuse_elementwise import FuseElementwiseProducer, count_generics, fuse_elementwise


def elementwise_chain(n_ops: int, size: int = 4) -> ModuleOp:
    """`@chain(%x, %y)`: v = x; then n_ops times v = relu(v) or v (+|*|-) y."""
    ty = tensor((size, size))
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("chain", ([ty, ty], [ty]))
    binary = (t.AddOp, t.MulOp, t.SubOp)
    with ImplicitBuilder(fn.body):
        value = fn.args[0]
        for k in range(n_ops):
            value = (binary[k % 3](value, fn.args[1]) if k % 2 else t.ReluOp(value)).result
        func.ReturnOp(value)
    return module


def pairwise(module: ModuleOp) -> None:
    walker = PatternRewriteWalker(GreedyRewritePatternApplier([FuseElementwiseProducer()]), apply_recursively=True)
    walker.rewrite_module(module)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pairwise", action="store_true", help="also time the pairwise pattern (quadratic)")
    args = parser.parse_args(argv)
    contenders = {"tree (the pass)": fuse_elementwise}
    if args.pairwise:
        contenders["pairwise pattern"] = pairwise
    lowered = {n: cortex.lower(elementwise_chain(n)) for n in args.sizes}
    samples: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.repeat):
        for n, module in lowered.items():
            for name, fuse in contenders.items():
                work = module.clone()
                start = time.perf_counter()
                fuse(work)
                samples.setdefault((name, n), []).append(time.perf_counter() - start)
                assert count_generics(work) == 1, f"{name} left {count_generics(work)} generics"
    print(f"cortex-fuse-linalg-elementwise, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; median ms over {args.repeat}")
    print(f"{'contender':<20}" + "".join(f"{f'{n} ops':>12}" for n in args.sizes))
    for name in contenders:
        print(f"{name:<20}" + "".join(f"{1000 * statistics.median(samples[(name, n)]):>12.1f}" for n in args.sizes))
    for name in contenders:
        for small, big in zip(args.sizes, args.sizes[1:]):
            ratio = statistics.median(samples[(name, big)]) / statistics.median(samples[(name, small)])
            print(f"ratio {name} {big}/{small} ops: {ratio:.2f} (linear = {big / small:.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
