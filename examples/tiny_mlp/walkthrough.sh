#!/usr/bin/env bash
# The tiny_mlp walk-through: validate, compile, run, compare.
# Usage: examples/tiny_mlp/walkthrough.sh [EULERNPU] [WORK_DIR]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
eulernpu="${1:-$here/../../build/bin/eulernpu}"
work="${2:-$(mktemp -d)}"

EX="$here"
"$eulernpu" validate "$EX/spec.yaml"
"$eulernpu" compile  --spec "$EX/spec.yaml" --weights "$EX/weights.npz" --out "$work/mlp"
"$eulernpu" run      --artifact "$work/mlp" --input "$EX/input.npz" --out "$work/mlp.out.npz"
"$eulernpu" compare  --got "$work/mlp.out.npz" --expected "$EX/golden.npz"
