"""Probe which tcgen05 forms each installed ptxas accepts (hand-written one-instruction PTX files).

usage: python3 corpus/realworld/src/ptxas_probes.py [--json] > probes.txt   (from the repo root, after scripts/setup-ptxas)

Every probe is one PTX file: a fixed header (.version V, .target T, .address_size 64), one .entry whose body
sets up a few registers and contains the probed line, assembled with
    .tools/cuda/<ver>/bin/ptxas -arch=<T> -o /dev/null probe.ptx
The verdict is "ok" or ptxas's first error line (file name and line number removed).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PTXAS = ["12.8", "12.9", "13.0", "13.5"]
VERSIONS = ["8.6", "8.7", "8.8", "9.0", "9.1", "9.2", "9.3", "9.4", "9.5", "9.6"]
TARGETS = ["sm_100a", "sm_100f", "sm_101a", "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_100"]

TEMPLATE = """.version {version}
.target {target}
.address_size 64

.shared .align 8 .b64 bar;
.shared .align 4 .b32 slot;

.visible .entry probe()
{{
  .reg .pred %p<2>;
  .reg .b16 %h<2>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<4>;
  mov.u32 %r1, slot;
  mov.u32 %r2, 64;
  ld.shared.b32 %r3, [slot];
  mov.u64 %rd1, bar;
  mov.b16 %h1, 3;
  mov.u32 %r6, 3;
  setp.ne.b32 %p1, %r2, 0;
  {line}
  ret;
}}
"""

BASE_ALLOC = "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;"


def ptxas(ver, target, version, line):
    src = TEMPLATE.format(version=version, target=target, line=line)
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(src)
        path = f.name
    exe = os.path.join(ROOT, ".tools", "cuda", ver, "bin", "ptxas")
    try:
        r = subprocess.run([exe, f"-arch={target}", "-o", os.devnull, path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if r.returncode == 0:
        return "ok"
    msgs = [l for l in (r.stderr + r.stdout).splitlines() if "error" in l or "fatal" in l]
    msg = msgs[0] if msgs else (r.stderr or r.stdout).strip().splitlines()[0]
    msg = re.sub(r"^ptxas\s+\S+\.ptx, line \d+; ", "", msg)
    msg = re.sub(r"^ptxas\s+", "", msg)
    msg = msg.replace(path, "probe.ptx")
    return msg.strip()


def newest_version(ver, target="sm_100a"):
    best = None
    for v in VERSIONS:
        if ptxas(ver, target, v, BASE_ALLOC) == "ok":
            best = v
    return best


def main():
    res = {"newest_version": {}, "probes": []}
    newest = {}
    for ver in PTXAS:
        row = {v: ptxas(ver, "sm_100a", v, BASE_ALLOC) for v in VERSIONS}
        res["newest_version"][ver] = row
        ok = [v for v, r in row.items() if r == "ok"]
        newest[ver] = ok[-1] if ok else None

    def probe(name, line, targets=("sm_100a",), versions=None):
        for t in targets:
            for ver in PTXAS:
                vs = versions or [newest[ver]]
                for v in vs:
                    if v is None:
                        continue
                    res["probes"].append({"name": name, "line": line, "target": t, "ptxas": ver, "version": v,
                                          "verdict": ptxas(ver, t, v, line)})

    allv = VERSIONS
    # targets accepted at all (baseline alloc), at each ptxas's newest .version
    probe("baseline alloc", BASE_ALLOC, targets=TARGETS)
    # .exclusive, both qualifier orders, all versions, main targets
    ex = {
        "alloc cta_group-then-exclusive (wild order)":
            "tcgen05.alloc.cta_group::1.exclusive.sync.aligned.shared::cta.b32 [%r1], 32;",
        "alloc exclusive-then-cta_group (CCCL order)":
            "tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;",
        "dealloc cta_group-then-exclusive": "tcgen05.dealloc.cta_group::1.exclusive.sync.aligned.b32 %r3, 32;",
        "dealloc exclusive-then-cta_group": "tcgen05.dealloc.exclusive.cta_group::1.sync.aligned.b32 %r3, 32;",
        "alloc exclusive cta_group::2 (CCCL order)":
            "tcgen05.alloc.exclusive.cta_group::2.sync.aligned.shared::cta.b32 [%r1], 32;",
        "relinquish exclusive": "tcgen05.relinquish_alloc_permit.exclusive.cta_group::1.sync.aligned;",
        "alloc exclusive no shared::cta": "tcgen05.alloc.exclusive.cta_group::1.sync.aligned.b32 [%r1], 32;",
    }
    for name, line in ex.items():
        probe(name, line, targets=("sm_100a",), versions=allv)
    for name in ("alloc exclusive-then-cta_group (CCCL order)", "alloc cta_group-then-exclusive (wild order)",
                 "dealloc exclusive-then-cta_group"):
        probe(name, ex[name], targets=("sm_100f", "sm_103a", "sm_110a", "sm_110f"))
    # nCols values (immediate and register)
    for n in ["16", "32", "48", "64", "96", "128", "256", "512", "1024", "%r2"]:
        probe(f"alloc exclusive nCols={n}",
              f"tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {n};")
        probe(f"alloc plain nCols={n}", f"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {n};")
    for n in ["16", "48", "1024"]:
        probe(f"dealloc plain nCols={n}", f"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, {n};")
    # shift spelling
    probe("shift syntax-line order", "tcgen05.shift.cta_group::1.down [%r3];",
          targets=("sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f"))
    probe("shift ISA-example order", "tcgen05.shift.down.cta_group::1 [%r3];", targets=("sm_100a",))
    # other qualifier orders
    orders = {
        "alloc sync.aligned before cta_group": "tcgen05.alloc.sync.aligned.cta_group::1.shared::cta.b32 [%r1], 32;",
        "alloc shared::cta before sync": "tcgen05.alloc.cta_group::1.shared::cta.sync.aligned.b32 [%r1], 32;",
        "alloc generic dst (no .shared::cta)": "tcgen05.alloc.cta_group::1.sync.aligned.b32 [%r1], 32;",
        "mma kind before cta_group": "tcgen05.mma.kind::f16.cta_group::1 [%r3], %rd1, %rd1, %r6, %p1;",
        "mma cta_group then kind": "tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd1, %rd1, %r6, %p1;",
        "commit without .shared::cluster": "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%rd1];",
        "commit multicast": "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%rd1], %h1;",
        "commit multicast::cluster::32b": "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster::32b.b64 [%rd1], %r6;",
        "ld sync.aligned after shape": "tcgen05.ld.32x32b.x2.sync.aligned.b32 {%r4, %r5}, [%r3];",
        "wait without sync.aligned": "tcgen05.wait::ld;",
    }
    for name, line in orders.items():
        probe(name, line)
    probe("commit multicast::cluster::32b", orders["commit multicast::cluster::32b"],
          targets=("sm_100f", "sm_103a", "sm_110a"))
    # ld.red
    red = {
        "ld.red .max.f32 (syntax-line order)": "tcgen05.ld.red.sync.aligned.32x32b.x2.max.f32 {%r4, %r5}, %f1, [%r3];",
        "ld.red .f32.max (ISA-example/CCCL order)": "tcgen05.ld.red.sync.aligned.32x32b.x2.f32.max {%r4, %r5}, %f1, [%r3];",
        "ld.red .min.abs.NaN.f32": "tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.NaN.f32 {%r4, %r5}, %f1, [%r3];",
        "ld.red .x1 (below .x2)": "tcgen05.ld.red.sync.aligned.32x32b.x1.max.f32 {%r4}, %f1, [%r3];",
        "ld.red u32": "tcgen05.ld.red.sync.aligned.32x32b.x2.max.u32 {%r4, %r5}, %r7, [%r3];",
        "ld.red 16x32bx2": "tcgen05.ld.red.sync.aligned.16x32bx2.x2.min.s32 {%r4, %r5}, %r7, [%r3], 8;",
        "ld.red 16x64b (not allowed shape)": "tcgen05.ld.red.sync.aligned.16x64b.x2.max.f32 {%r4, %r5}, %f1, [%r3];",
    }
    for name, line in red.items():
        probe(name, line, targets=("sm_100a", "sm_100f", "sm_103a", "sm_103f", "sm_110a", "sm_110f"))
    # single-point extras: (ptxas, target, .version, line)
    extras = [
        ("13.5", "sm_100a", "9.5", "tcgen05.dealloc.exclusive.cta_group::1.sync.aligned.b32 %r3, 96;"),
        ("13.5", "sm_100a", "9.5", "tcgen05.dealloc.exclusive.cta_group::1.sync.aligned.b32 %r3, 1024;"),
        ("13.5", "sm_100a", "9.5", "tcgen05.dealloc.exclusive.cta_group::1.sync.aligned.b32 %r3, 48;"),
        ("13.5", "sm_100a", "9.5", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 96;"),
        ("13.0", "sm_100a", "9.0", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 96;"),
        ("13.5", "sm_100a", "9.5", "tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 2048;"),
        ("13.5", "sm_100a", "9.5", "tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 0;"),
        ("13.5", "sm_100a", "9.5", "tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 544;"),
        ("13.5", "sm_103f", "9.5", "tcgen05.alloc.exclusive.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;"),
        ("13.5", "sm_100a", "9.5", "tcgen05.alloc.cta_group::1.sync.aligned.exclusive.shared::cta.b32 [%r1], 32;"),
        ("13.5", "sm_103a", "8.7", "tcgen05.ld.red.sync.aligned.32x32b.x2.max.f32 {%r4, %r5}, %f1, [%r3];"),
        ("13.5", "sm_103a", "8.8", "tcgen05.ld.red.sync.aligned.32x32b.x2.max.f32 {%r4, %r5}, %f1, [%r3];"),
        ("13.5", "sm_103a", "8.7", BASE_ALLOC),
        ("13.5", "sm_100f", "8.7", BASE_ALLOC),
        ("13.5", "sm_100f", "8.8", BASE_ALLOC),
        ("13.5", "sm_110a", "8.8", BASE_ALLOC),
        ("13.5", "sm_110a", "9.0", BASE_ALLOC),
        ("13.5", "sm_103f", "9.5", "tcgen05.shift.cta_group::1.down [%r3];"),
        ("12.8", "sm_101a", "8.7", "tcgen05.shift.cta_group::1.down [%r3];"),
        ("13.5", "sm_100a", "9.5", "tcgen05.shift.down.cta_group::2 [%r3];"),
        ("13.5", "sm_100a", "9.5", "tcgen05.shift.cta_group::1.up [%r3];"),
    ]
    for ver, t, v, line in extras:
        res["probes"].append({"name": "extra", "line": line, "target": t, "ptxas": ver, "version": v,
                              "verdict": ptxas(ver, t, v, line)})
    if "--json" in sys.argv:
        json.dump(res, sys.stdout, indent=1)
        return
    print("newest .version accepted on sm_100a (baseline alloc):")
    for ver in PTXAS:
        print(f"  ptxas {ver}: {newest[ver]}   " +
              " ".join(f"{v}:{'ok' if r == 'ok' else 'no'}" for v, r in res['newest_version'][ver].items()))
    for ver in PTXAS:
        bad = {r for v, r in res["newest_version"][ver].items() if r != "ok"}
        for b in sorted(bad):
            print(f"  ptxas {ver} rejection: {b}")
    last = None
    for p in res["probes"]:
        if (p["name"], p["line"]) != last:
            print(f"\n[{p['name']}]  {p['line']}")
            last = (p["name"], p["line"])
        print(f"  ptxas {p['ptxas']:4} .version {p['version']} {p['target']:8} {p['verdict']}")


if __name__ == "__main__":
    main()
