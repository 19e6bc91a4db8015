#!/bin/sh
# Installs the storage servers the store tests start (test/stores/): an S3-compatible server (versitygw) and a
# GCS emulator (fake-gcs-server), both Go programs built from the Go module proxy at pinned versions. Azurite,
# the Azure Storage emulator, is an npm devDependency and comes with `npm ci`. Idempotent: a binary already
# built for its version is kept, so a second run takes milliseconds. Binaries go to
# ${THUMBD_TEST_SERVERS:-~/.cache/thumbd/test-servers}/<name>-<version>/ (test/stores/servers.ts looks there).
# Needs Go (Debian's golang-go is installed if missing; go fetches the newer toolchain the servers need). Without
# Go, says so and exits non-zero only when CI is set.
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

if ! command -v go >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || command -v sudo >/dev/null 2>&1; }; then
  # Debian's Go may be older than the servers need: go install then fetches the toolchain their go.mod names
  # (GOTOOLCHAIN=auto, from the Go module proxy).
  as_root=""
  [ "$(id -u)" = 0 ] || as_root="sudo"
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends golang-go >/dev/null || true
fi
if ! command -v go >/dev/null 2>&1; then
  echo "thumbd: Go is not installed, so the S3 and GCS test servers cannot be built (the store tests will skip them outside CI)" >&2
  [ -z "${CI:-}" ] || exit 1
  exit 0
fi

install_go_tool versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION"
install_go_tool fake-gcs-server github.com/fsouza/fake-gcs-server "$FAKE_GCS_VERSION"
