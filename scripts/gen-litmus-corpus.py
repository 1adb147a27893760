#!/usr/bin/env python3
"""Writes corpus/litmus/*.ptx: a litmus file (docs/litmus.md) for every example of the seed
texts (PTX ISA §9.7.16.7.1 alloc, §9.7.16.8.5 wait, §9.7.16.6.4 canonical patterns) and every
§9.7.16.6.2 pipelined pair, same thread and across threads, plus breaking variants.

Each file's `//@ expect` is written here from the quoted sentence (never from the tool's
output); tests/litmus_corpus.rs checks `tcgen05-fuzz litmus` against it. A race on a read
is, by the catalogue's consequence column ("race → unspecified"), a run that completes with the
value read unspecified: `expect verdict=completes unspecified=r0`.
Run from the repository root: python3 scripts/gen-litmus-corpus.py
"""
import os

OUT = "corpus/litmus"

HEAD = """.version 8.6
.target sm_100a
.address_size 64

.shared .align 4 .b32 slot;
.shared .align 8 .b64 bar0;
.shared .align 8 .b64 bar1;
.shared .align 8 .b64 bar9;
.shared .align 1024 .b8 dataA[4096];
.shared .align 1024 .b8 dataB[4096];
"""

# Descriptor of a no-swizzle K-major tile at `sym` (start field | fixed fields), as the
# printer writes it; f16 MMA, M=128, instruction descriptor 134742032.
def desc(reg, sym, tmp):
    return f"""	mov.u32 {tmp}, {sym};
	and.b32 {tmp}, {tmp}, 262143;
	shr.u32 {tmp}, {tmp}, 4;
	cvt.u64.u32 {reg}, {tmp};
	or.b64 {reg}, {reg}, 70437464178688;
"""

OPS = {
    # D (columns 0..) from A, B in shared memory.
    "mma": desc("%rd1", "dataA", "%r40") + desc("%rd2", "dataB", "%r41") + """	mov.u32 %r42, 134742032;
	setp.ne.u32 %p8, %r42, 0;
	tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd1, %rd2, %r42, %p8;
""",
    # D from A in TMEM (columns 64..) and B in shared memory.
    "mma-atmem": desc("%rd2", "dataB", "%r41") + """	add.u32 %r43, %r3, 64;
	mov.u32 %r42, 134742032;
	setp.ne.u32 %p8, %r42, 0;
	tcgen05.mma.cta_group::1.kind::f16 [%r3], [%r43], %rd2, %r42, %p8;
""",
    "cp": desc("%rd3", "dataA", "%r44") + """	add.u32 %r45, %r3, 64;
	tcgen05.cp.cta_group::1.128x256b [%r45], %rd3;
""",
    "cp4x256b": desc("%rd3", "dataA", "%r44") + """	tcgen05.cp.cta_group::1.4x256b [%r3], %rd3;
""",
    "shift-a": """	add.u32 %r46, %r3, 64;
	tcgen05.shift.cta_group::1.down [%r46];
""",
    "shift-d": """	tcgen05.shift.cta_group::1.down [%r3];
""",
}

def elect(label, body):
    return f"""	elect.sync _|%p5, -1;
	@!%p5 bra {label};
{body}{label}:
"""

def wait(bar, label):
    return f"""{label}:
	mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p9, [{bar}], 0;
	@!%p9 bra {label};
"""

ARRIVE = "	mbarrier.arrive.release.cta.shared::cta.b64 _, [{bar}];\n"
COMMIT = """	mov.u32 %r47, {bar};
	tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r47];
"""

def kernel(warps, w0, w1="", done_commit=False, observe_ld=False):
    """Warp 0 allocates 256 columns and initializes the mbarriers; then warp 0 runs `w0` and
    warp 1 runs `w1`; warp 0 frees after a barrier (waiting on bar9 first when the last
    asynchronous operation was committed there)."""
    tail = ""
    if done_commit:
        tail = wait("bar9", "$DONE_W")
    return HEAD + f"""
.visible .entry k()
.reqntid {32 * warps}, 1, 1
{{
	.reg .b32 %r<64>;
	.reg .b64 %rd<16>;
	.reg .pred %p<16>;
	mov.u32 %r0, %tid.x;
	shr.u32 %r1, %r0, 5;
	setp.ne.u32 %p0, %r1, 0;
	@%p0 bra $SETUP_END;
	mov.u32 %r2, slot;
	tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 256;
	elect.sync _|%p4, -1;
	@!%p4 bra $INIT_END;
	mbarrier.init.shared::cta.b64 [bar0], 1;
	mbarrier.init.shared::cta.b64 [bar1], 1;
	mbarrier.init.shared::cta.b64 [bar9], 1;
$INIT_END:
$SETUP_END:
	tcgen05.fence::before_thread_sync;
	bar.sync 0;
	tcgen05.fence::after_thread_sync;
	ld.shared.b32 %r3, [slot];
	setp.eq.u32 %p1, %r1, 1;
	@%p1 bra $W1;
{w0}	bra.uni $JOIN;
$W1:
{w1}$JOIN:
	setp.ne.u32 %p0, %r1, 0;
	@%p0 bra $FREE_END;
{tail}	tcgen05.fence::before_thread_sync;
$FREE_END:
	bar.sync 0;
	@%p0 bra $END;
	tcgen05.fence::after_thread_sync;
	tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 256;
	tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
$END:
	ret;
}}
"""

FILES = {}

def add(name, header, ptx):
    FILES[name] = "".join(f"//@ {h}\n" for h in [f"litmus {name}"] + header) + ptx

# --- §9.7.16.7.1 (seeds 000, 001): alloc examples -------------------------------------------
add("alloc-example-1", [
    'source PTX ISA §9.7.16.7.1, Example 1: "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sMemAddr1], 32; ld.shared.b32 taddr, [sMemAddr1]; ... tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, 32; ... tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"',
    "launch warps=1",
    "expect verdict=completes",
], HEAD + """
.visible .entry k()
.reqntid 32, 1, 1
{
	.reg .b32 %r<8>;
	mov.u32 %r1, slot;
	tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;
	ld.shared.b32 %r2, [slot];
	tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
	tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
	ret;
}
""")

PAIR = HEAD + """
.visible .entry k()
.reqntid 32, 1, 1
.reqnctapercluster 2, 1, 1
{
	.reg .b32 %r<8>;
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	mov.u32 %r1, slot;
	tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], 32;
	ld.shared.b32 %r2, [slot];
	tcgen05.fence::before_thread_sync;
	barrier.cluster.arrive.release.aligned;
	barrier.cluster.wait.acquire.aligned;
	tcgen05.fence::after_thread_sync;
	tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, 32;
	tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
	ret;
}
"""
add("alloc-example-2-pair", [
    'source PTX ISA §9.7.16.7.1, Example 2: "Following instructions are performed by current warp and the warp in the peer-CTA: tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [sMemAddr2], 32; ... tcgen05.dealloc.cta_group::2 ... tcgen05.relinquish_alloc_permit.cta_group::2"; "issuing warp and peer CTA warp must synchronize Tensor Memory accesses before attempting to collectively deallocate" (the cluster barriers)',
    "launch warps=1 cluster=2",
    "expect verdict=completes",
], PAIR)

# --- §9.7.16.8.5 (seed 002): wait examples --------------------------------------------------
LD_THEN_MMA = """	tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r3];
{wait}""" + elect("$E0", OPS["mma"] + COMMIT.format(bar="bar9"))
add("wait-example-1", [
    'source PTX ISA §9.7.16.8.5, Example 1: "tcgen05.ld.sync.aligned.32x32b.x2.b32 {r0, r1}, [taddr0]; // Prevents subsequent tcgen05.mma from racing ahead of the tcgen05.ld: tcgen05.wait::ld.sync.aligned; tcgen05.mma.cta_group::1.kind::f16 [taddr0], a-desc, b-desc, idesc, p;"',
    "launch warps=1",
    "expect verdict=completes",
], kernel(1, LD_THEN_MMA.replace("{wait}", "\ttcgen05.wait::ld.sync.aligned;\n"), done_commit=True))
add("wait-example-1-without-wait", [
    'source PTX ISA §9.7.16.8.5, Example 1 without its wait: "Prevents subsequent tcgen05.mma from racing ahead of the tcgen05.ld" — without tcgen05.wait::ld the mma may write taddr0 before the ld reads it; §9.7.16.6.4.5: "To enforce such memory orderings and avoiding anti-dependency hazards around tcgen05.ld, tcgen05.wait::ld must be used."',
    "launch warps=1",
    "observe r0 = %r10 warp=0 lane=0",
    "expect verdict=completes unspecified=r0",
], kernel(1, LD_THEN_MMA.replace("{wait}", ""), done_commit=True))
ST_THEN_MMA = """	mov.u32 %r12, 7;
	tcgen05.st.sync.aligned.32x32b.x2.b32 [%r3], {%r12, %r12};
{wait}""" + elect("$E0", OPS["mma"] + COMMIT.format(bar="bar9"))
add("wait-example-2", [
    'source PTX ISA §9.7.16.8.5, Example 2: "tcgen05.st.sync.aligned.32x32b.x2.b32 [taddr0], {r0, r1}; // Prevents the write to taddr0 in tcgen05.mma from racing ahead of the tcgen05.st: tcgen05.wait::st.sync.aligned; tcgen05.mma.cta_group::1.kind::f16 [taddr0], a-desc, b-desc, idesc, p;"',
    "launch warps=1",
    "expect verdict=completes",
], kernel(1, ST_THEN_MMA.replace("{wait}", "\ttcgen05.wait::st.sync.aligned;\n"), done_commit=True))
add("wait-example-2-without-wait", [
    'source PTX ISA §9.7.16.8.5, Example 2 without its wait: "Prevents the write to taddr0 in tcgen05.mma from racing ahead of the tcgen05.st"; §9.7.16.6.1: asynchronous operations "are not inherently ordered with respect to other tcgen05 operations in the same thread (unless pipelined)" and st → mma is not a pipelined pair (§9.7.16.6.2)',
    "launch warps=1",
    "expect verdict=undefined",
], kernel(1, ST_THEN_MMA.replace("{wait}", ""), done_commit=True))

# --- §9.7.16.6.4 (seed 004): canonical patterns ---------------------------------------------
add("mma-commit-wait-ld", [
    'source PTX ISA §9.7.16.6.4.2, Example 2: "tcgen05.mma [d], ...; tcgen05.commit.mbarrier::arrive::one; mbarrier.try_wait.relaxed.cluster (loop until successful); tcgen05.fence::after_thread_sync; tcgen05.ld [d], ..." — "No explicit tcgen05.fence::before_thread_sync is needed as this is implicitly performed by tcgen05.commit."',
    "launch warps=1",
    "expect verdict=completes",
], kernel(1, elect("$E0", OPS["mma"] + COMMIT.format(bar="bar0")) + wait("bar0", "$WT0") + """	tcgen05.fence::after_thread_sync;
	tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r3];
	tcgen05.wait::ld.sync.aligned;
"""))
add("mma-commit-ld-without-wait", [
    'source PTX ISA §9.7.16.6.4.2, Example 2 without the mbarrier wait: "For the completion of the asynchronous tcgen05.mma, tcgen05.commit is used" — the ld does not wait for that completion, so it races with the mma\'s write of [d] (§9.7.16.6.1: not ordered)',
    "launch warps=1",
    "observe r0 = %r10 warp=0 lane=0",
    "expect verdict=completes unspecified=r0",
], kernel(1, elect("$E0", OPS["mma"] + COMMIT.format(bar="bar0")) + """	tcgen05.fence::after_thread_sync;
	tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r3];
	tcgen05.wait::ld.sync.aligned;
""" + wait("bar0", "$WT0")))

XT = lambda prod, cons, bar="bar0": (elect("$E0", prod + "\ttcgen05.fence::before_thread_sync;\n" + ARRIVE.format(bar=bar)),
                                     elect("$E1", wait(bar, "$WT1") + "\ttcgen05.fence::after_thread_sync;\n" + cons + COMMIT.format(bar="bar9")))

LD_W0 = """	tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r3];
	tcgen05.wait::ld.sync.aligned;
	tcgen05.fence::before_thread_sync;
""" + elect("$E0", ARRIVE.format(bar="bar0"))
add("ld-mma-cross-thread", [
    'source PTX ISA §9.7.16.6.4.4, Example 1 (non-pipelined instructions, different thread): "Thread 0: tcgen05.ld; tcgen05.wait::ld; tcgen05.fence::before_thread_sync; mbarrier.arrive.relaxed.cluster | Thread 1: mbarrier.try_wait.relaxed.cluster // loop till success; tcgen05.fence::after_thread_sync; tcgen05.mma"',
    "launch warps=2",
    "expect verdict=completes",
], kernel(2, LD_W0, elect("$E1", wait("bar0", "$WT1") + "\ttcgen05.fence::after_thread_sync;\n" + OPS["mma"] + COMMIT.format(bar="bar9")), done_commit=True))

LD_W1 = wait("bar0", "$WT1") + """	tcgen05.fence::after_thread_sync;
	add.u32 %r20, %r3, 2097152;
	tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r10, %r11}, [%r20];
	tcgen05.wait::ld.sync.aligned;
"""
add("mma-commit-ld-cross-thread", [
    'source PTX ISA §9.7.16.6.4.4, Example 2: "Thread 0: tcgen05.mma; tcgen05.commit.mbarrier::arrive::one [mbar] | Thread 1: mbarrier.try_wait.relaxed.cluster [mbar] // loop till success; tcgen05.fence::after_thread_sync; tcgen05.ld" (warp 1 reads its own lane quarter, lanes 32-63)',
    "launch warps=2",
    "expect verdict=completes",
], kernel(2, elect("$E0", OPS["mma"] + COMMIT.format(bar="bar0")), LD_W1))
add("mma-commit-ld-cross-thread-without-fence", [
    'source PTX ISA §9.7.16.6.4.4, Example 2 without the consumer\'s tcgen05.fence::after_thread_sync: §9.7.16.6.3 "An asynchronous tcgen05 operation subsequent to a tcgen05.fence::after_thread_sync is ordered after all the prior tcgen05 and the execution ordering operations" — without it the ld is not ordered after the mma',
    "launch warps=2",
    "observe r0 = %r10 warp=1 lane=0",
    "expect verdict=completes unspecified=r0",
], kernel(2, elect("$E0", OPS["mma"] + COMMIT.format(bar="bar0")), LD_W1.replace("\ttcgen05.fence::after_thread_sync;\n", "")))

add("composed-cross-thread", [
    'source PTX ISA §9.7.16.6.4.4, composition: "Thread 0: tcgen05.mma; tcgen05.commit.mbarrier::arrive::one [bar1]; mbarrier.try_wait.relaxed.cluster [bar1] // loop; tcgen05.fence::after_thread_sync; // completion is guaranteed; tcgen05.fence::before_thread_sync; mbarrier.arrive.relaxed.cluster [bar2] | Thread 1: mbarrier.try_wait.relaxed.cluster [bar2] // loop; tcgen05.fence::after_thread_sync; tcgen05.ld"',
    "launch warps=2",
    "expect verdict=completes",
], kernel(2, elect("$E0", OPS["mma"] + COMMIT.format(bar="bar1")) + wait("bar1", "$WT0") + "\ttcgen05.fence::after_thread_sync;\n\ttcgen05.fence::before_thread_sync;\n" + elect("$E2", ARRIVE.format(bar="bar0")), LD_W1))

# Warp 0 reads the accumulator once every asynchronous operation has completed.
READ_D = """	tcgen05.fence::after_thread_sync;
	tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r30}, [%r3];
	tcgen05.wait::ld.sync.aligned;
"""

def cross(w0, w1):
    """Two threads; the producer also commits (bar1) so that warp 0 frees only after both
    threads' asynchronous operations completed."""
    return kernel(2, w0 + elect("$E3", COMMIT.format(bar="bar1")), w1, done_commit=True).replace(
        wait("bar9", "$DONE_W"), wait("bar9", "$DONE_W") + wait("bar1", "$DONE_W1"))

# --- §9.7.16.6.2: the pipelined pairs, same thread and across threads -----------------------
PAIRS = [
    ("mma-mma", "1. tcgen05.mma.cta_group::N -> tcgen05.mma.cta_group::N (same N and accumulator and shape)", OPS["mma"], OPS["mma"]),
    ("cp-mma", "2. tcgen05.copy.cta_group::N -> tcgen05.mma.cta_group::N (same N)", OPS["cp"], OPS["mma-atmem"]),
    ("shift-mma", "3. tcgen05.shift.cta_group::N -> tcgen05.mma.cta_group::N (same N)", OPS["shift-a"], OPS["mma-atmem"]),
    ("shift-cp4x256b", "4. tcgen05.shift.cta_group::N -> tcgen05.cp.4x256b.cta_group::N (same N)", OPS["shift-d"], OPS["cp4x256b"]),
    ("mma-shift", "5. tcgen05.mma.cta_group::N -> tcgen05.shift.cta_group::N (same N)", OPS["mma"], OPS["shift-d"]),
]
for name, quote, a, b in PAIRS:
    add(f"pipelined-{name}-same-thread", [
        f'source PTX ISA §9.7.16.6.2: "some specific pairs of the asynchronous tcgen05 instructions form tcgen05 pipelines, where in the two asynchronous operations are guaranteed to execute in the same order as the instructions that issued them": "{quote}"; §9.7.16.6.4.1: "no explicit ordering mechanism is needed"',
        "launch warps=1",
        "expect verdict=completes",
    ], kernel(1, elect("$E0", a + b + COMMIT.format(bar="bar9")), done_commit=True))
    w0, w1 = XT(a, b)
    add(f"pipelined-{name}-cross-thread", [
        f'source PTX ISA §9.7.16.6.3: "The asynchronous tcgen05 instructions that are ordered across threads also form a tcgen05 pipeline" — pair "{quote}" issued by two threads, with "tcgen05.fence::before_thread_sync; mbarrier.arrive" and "mbarrier.try_wait; tcgen05.fence::after_thread_sync" (§9.7.16.6.4.3)',
        "launch warps=2",
        "expect verdict=completes",
    ], cross(w0, w1))

w0, w1 = XT(OPS["cp"], OPS["mma-atmem"])
add("pipelined-cp-mma-cross-thread-without-fences", [
    'source PTX ISA §9.7.16.6.4.3 (pipelined instructions, different thread: "Thread 0: tcgen05.cp; tcgen05.fence::before_thread_sync; mbarrier.arrive.relaxed.cluster | Thread 1: mbarrier.try_wait.relaxed.cluster // loop till success; tcgen05.fence::after_thread_sync; tcgen05.mma") without the fences: "no explicit waiting mechanism is needed but proper synchronization between threads is needed" — lane 0 of warp 0 and lane 0 of warp 1 are different threads, and without tcgen05.fence::before_thread_sync / after_thread_sync the cp and the mma are not ordered (§9.7.16.6.1); the catalogue\'s consequence of MCM-XTHREAD is "race → unspecified": the accumulator the mma writes, read back once everything completed, is unspecified',
    "launch warps=2",
    "observe d0 = %r30 warp=0 lane=0",
    "expect verdict=completes unspecified=d0",
], cross(w0.replace("\ttcgen05.fence::before_thread_sync;\n", ""), w1.replace("\ttcgen05.fence::after_thread_sync;\n", "")).replace(
    wait("bar1", "$DONE_W1"), wait("bar1", "$DONE_W1") + READ_D))

os.makedirs(OUT, exist_ok=True)
for name, text in FILES.items():
    with open(os.path.join(OUT, name + ".ptx"), "w") as f:
        f.write(text)
print(f"wrote {len(FILES)} files to {OUT} (st-wait-ld.ptx is written by hand)")
