"""Compile the Triton / Gluon kernels listed in triton_kernels.py and gluon_kernels.py to PTX, without a GPU.

usage: python gen_triton.py OUTDIR [module ...] [--only STEM ...]

For each entry (stem, fn, signature, constexprs, options, arch) of each module's KERNELS list this runs
    triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget("cuda", arch, 32), options=options)
(GluonASTSource for Gluon kernels) and writes .asm["ptx"] to OUTDIR/<stem>.ptx. It prints one JSON line per
kernel (stem, arch, options, triton version, PTX .version/.target) for the manifest.
"""
import importlib
import json
import os
import sys
import traceback

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402


def main():
    args = sys.argv[1:]
    only = []
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1:]
        args = args[:i]
    outdir = args[0]
    modules = args[1:] or ["triton_kernels", "gluon_kernels"]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(outdir, exist_ok=True)
    failed = 0
    for modname in modules:
        mod = importlib.import_module(modname)
        gluon = modname.startswith("gluon")
        if gluon:
            from triton.experimental.gluon._runtime import GluonASTSource as Src
        else:
            Src = ASTSource
        for stem, fn, sig, consts, options, arch in mod.KERNELS:
            if only and stem not in only:
                continue
            try:
                src = Src(fn, signature=sig, constexprs=consts)
                k = triton.compile(src, target=GPUTarget("cuda", arch, 32), options=dict(options))
                ptx = k.asm["ptx"]
            except Exception as e:  # keep going; report
                failed += 1
                print(f"FAILED {stem}: {type(e).__name__}: {str(e)[:2000]}", file=sys.stderr)
                traceback.print_exc(limit=3)
                continue
            path = os.path.join(outdir, stem + ".ptx")
            with open(path, "w") as f:
                f.write(ptx)
            head = {l.split()[0]: l.split()[1] for l in ptx.splitlines()[:40] if l.startswith((".version", ".target"))}
            print(json.dumps({"file": stem + ".ptx", "frontend": "gluon" if gluon else "triton",
                              "triton": triton.__version__, "module": modname + ".py", "kernel": fn.__name__,
                              "arch": arch, "options": options,
                              "constexprs": {k: str(v) for k, v in consts.items()},
                              "ptx_version": head.get(".version"), "target": head.get(".target"),
                              "bytes": len(ptx.encode())}), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
