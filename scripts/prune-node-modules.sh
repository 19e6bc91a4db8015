#!/bin/sh
# Removes from an installed node_modules what Node never loads at run time: source maps (read only with
# --enable-source-maps, which thumbd does not set), TypeScript sources and declarations (Node refuses to
# strip types under node_modules, so no package can run them), and Markdown documents. Licence files stay.
# The Docker image's deps stage runs it after `npm ci --omit=dev`: of ~160 MB, ~60 MB and ~12,000 files go
# (docs/operations.md, "The image"); test/ops/production-smoke.test.ts runs the server on what is left.
#   usage: scripts/prune-node-modules.sh NODE_MODULES_DIR
set -eu
find "$1" -type f \( -name '*.map' -o -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.md' -o -name '*.markdown' \) \
  ! -iname 'licen[cs]e*' ! -iname 'copying*' -delete
