#!/usr/bin/env bash
# Quick start, command 1: install what is needed, build, and run the
# tiny_mlp walk-through (validate -> compile -> run -> compare).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >/dev/null
exec "$root/examples/tiny_mlp/walkthrough.sh" "${EULERNPU_BUILD_DIR:-$root/build}/bin/eulernpu"
