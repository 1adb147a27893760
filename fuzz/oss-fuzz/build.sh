#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build script for tcgen05-fuzz: builds every cargo-fuzz target of
# fuzz/ with the sanitizer flags the builder image sets, and copies the binaries, their seed
# corpora and dictionaries to $OUT. The opt-in targets `ptxas` and `cuda` are left out: they
# need a ptxas binary or a GPU, which the fuzzing infrastructure does not have.
cd "$SRC/tcgen05-fuzz"

TARGETS="diff_sim near_miss ptx_roundtrip parse_ptx codec"

# cargo fuzz builds every target (ptxas and cuda too: they build anywhere) into the workspace
# target folder (fuzz/ is a workspace member).
cargo fuzz build -O --debug-assertions
BUILD="target/x86_64-unknown-linux-gnu/release"

for t in $TARGETS; do
  cp "$BUILD/$t" "$OUT/"
done

# Seed corpora: case files for `codec`, PTX text for `parse_ptx` (generated cases and real
# compiler output). diff_sim and near_miss read bytes through the generators, which no stored
# program maps back to, so they start from an empty corpus.
seed_zip() {
  local name=$1; shift
  local tmp; tmp=$(mktemp -d)
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$tmp/$(echo "$f" | tr '/' '_')"; done
  if [ -n "$(ls -A "$tmp")" ]; then (cd "$tmp" && zip -q -r "$OUT/${name}_seed_corpus.zip" .); fi
  rm -rf "$tmp"
}
seed_zip codec corpus/seeds/*.case corpus/regressions/*/case.case
seed_zip parse_ptx corpus/seeds/*.ptx corpus/regressions/*/case.ptx $(find corpus/realworld -name '*.ptx' | head -200)
