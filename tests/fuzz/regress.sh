#!/bin/sh
# One regression run of a libFuzzer target for meson (suite 'fuzz'):
#   regress.sh TARGET SCRATCH_DIR CORPUS_DIR RUNS
# Replays the committed corpus, then tries RUNS mutations from a fixed seed.
# New inputs go to SCRATCH_DIR (emptied first), never into the source tree:
# libFuzzer writes to the first directory it is given. A crash exits 1:
# libFuzzer's own default, 77, is what meson reports as a skipped test.
set -eu
target=$1 scratch=$2 corpus=$3 runs=$4
rm -rf "$scratch"
mkdir -p "$scratch"
exec "$target" -runs="$runs" -seed=1 -max_len=4096 -error_exitcode=1 -print_final_stats=1 "$scratch" "$corpus"
