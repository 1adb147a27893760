#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script for tcgen05-fuzz: builds every cargo-fuzz target of
# fuzz/ with the sanitizer flags the builder image sets, and copies the binaries and their seed
# corpora to $OUT. The opt-in targets `ptxas` and `cuda` are left out: they need a ptxas binary
# or a GPU, which the fuzzing infrastructure does not have.
cd "$SRC/tcgen05-fuzz"

TARGETS="diff_sim near_miss ptx_roundtrip parse_ptx codec"

# cargo fuzz builds every target (ptxas and cuda too: they build anywhere) into the workspace
# target folder (fuzz/ is a workspace member).
cargo fuzz build -O --debug-assertions
BUILD="target/x86_64-unknown-linux-gnu/release"

for t in $TARGETS; do
  cp "$BUILD/$t" "$OUT/"
done

# Seed corpora: corpus/seeds/<target>/ holds inputs in the form each target reads (written by
# `cargo run -p tcgen05-fuzz-targets --example gen_seeds -- corpus/seeds`, see fuzz/README.md);
# the infrastructure unpacks $OUT/<target>_seed_corpus.zip as the target's starting corpus.
for t in $TARGETS; do
  if [ -n "$(ls -A "corpus/seeds/$t" 2>/dev/null)" ]; then
    (cd "corpus/seeds/$t" && zip -q -j "$OUT/${t}_seed_corpus.zip" ./*)
  fi
done
