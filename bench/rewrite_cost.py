"""What the settle rewrite adds to preparing a tiny block (issue 13). Reported, never asserted.

    cpython-dist/3.11/linux-x86_64-gnu/python/bin/python3 bench/rewrite_cost.py [--against OTHER_rewrite.py]

Baseline, in the same run: parsing the block and compiling it from its text, which is what a
block the rewrite leaves alone costs. The three are timed in interleaved rounds and each keeps
its best round, so a busy machine slows all of them alike. `--against` times another version of
rewrite.py too (e.g. `git show main:vis-guest/vis_guest/rewrite.py > /tmp/old.py`)."""

import ast
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

BLOCKS = {
    "assign": "x = 1",
    "builtin call": "r = len('abc')",
    "call+print": "r = len('abc')\nprint(r)",
    "tool call": "r = cat('a.py')\nprint(r['text'])",
    "loop+def": "total = 0\nfor i in range(50):\n    v = abs(i - 25)\n    if v > 10:\n        total += v\n"
    "def f(a):\n    b = max(a, 3)\n    return b * 2\ntotal += f(total)\ntotal",
    "async gather": "async def f(q):\n    t = grep(q)\n    return await gather(t)\n"
    "res = await gather(*[f(q) for q in 'abc'])\nres",
}


def load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def prepare_with(mod):
    def run(src: str):
        tree = ast.parse(src, "<b>", "exec")
        return mod.compile_block(*mod.rewrite(tree, True, src), "<b>", src)

    return run


def baseline(src: str):
    ast.parse(src, "<b>", "exec")
    return compile(src, "<b>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


def best(fns: dict, src: str, rounds: int = 40, per: int = 100) -> dict:
    out = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter_ns()
            for _ in range(per):
                fn(src)
            out[k] = min(out[k], (time.perf_counter_ns() - t0) / per / 1000)
    return out


def main() -> None:
    fns = {
        "base": baseline,
        "this": prepare_with(load("rw_this", os.path.join(HERE, "..", "vis-guest", "vis_guest", "rewrite.py"))),
    }
    if "--against" in sys.argv:
        fns["other"] = prepare_with(load("rw_other", sys.argv[sys.argv.index("--against") + 1]))
    print(f"python {sys.version.split()[0]}; best of 40 rounds, µs per block")
    head = f"{'block':14} {'parse+compile':>13} {'rewrite':>8} {'ratio':>6}"
    if "other" in fns:
        head += f" {'other':>8} {'ratio':>6}"
    print(head)
    for name, src in BLOCKS.items():
        t = best(fns, src)
        line = f"{name:14} {t['base']:13.1f} {t['this']:8.1f} {t['this'] / t['base']:6.2f}"
        if "other" in t:
            line += f" {t['other']:8.1f} {t['other'] / t['base']:6.2f}"
        print(line)


if __name__ == "__main__":
    main()
