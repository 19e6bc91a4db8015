#!/bin/sh
# Installs the storage servers the store tests start (test/stores/): an S3-compatible server (versitygw) and a
# GCS emulator (fake-gcs-server), both Go programs built from the Go module proxy at pinned versions. Azurite,
# the Azure Storage emulator, is an npm devDependency and comes with `npm ci`. Idempotent: a binary already
# built for its version is kept, so a second run takes milliseconds. Binaries go to
# ${THUMBD_TEST_SERVERS:-~/.cache/thumbd/test-servers}/<name>-<version>/ (test/stores/servers.ts looks there).
# Needs Go (1.25 or newer); without it, says so and exits non-zero only when CI is set.
set -eu

VERSITYGW_VERSION=v1.8.0
FAKE_GCS_VERSION=v1.56.1

dir="${THUMBD_TEST_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/thumbd/test-servers}"

install_go_tool () { # name module version
  target="$dir/$1-$3"
  if [ -x "$target/$1" ]; then return 0; fi
  echo "building $1 $3 (go install $2@$3) into $target" >&2
  mkdir -p "$target.tmp"
  # A temp folder then a rename: an interrupted build never leaves a half-made binary where the tests look.
  GOBIN="$target.tmp" GOFLAGS="-buildvcs=false -trimpath" CGO_ENABLED=0 nice -n 10 go install "$2@$3"
  rm -rf "$target"
  mv "$target.tmp" "$target"
}

if ! command -v go >/dev/null 2>&1; then
  echo "thumbd: Go is not installed, so the S3 and GCS test servers cannot be built (the store tests will skip them outside CI)" >&2
  [ -z "${CI:-}" ] || exit 1
  exit 0
fi

install_go_tool versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION"
install_go_tool fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_VERSION"
