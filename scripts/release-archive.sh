#!/usr/bin/env bash
# Packs a built `toolgate` binary as the release archive that
# `cargo binstall toolgate-cli` downloads ([package.metadata.binstall] in
# crates/toolgate-cli/Cargo.toml):
#
#   OUT/toolgate-VERSION-TARGET.tar.gz
#     toolgate-VERSION-TARGET/toolgate     the binary
#     toolgate-VERSION-TARGET/README.md
#
# Usage: scripts/release-archive.sh BINARY TARGET OUT
#   BINARY  e.g. target/release/toolgate (cargo build --release --locked -p toolgate-cli)
#   TARGET  the binary's target triple, e.g. x86_64-unknown-linux-gnu
#   OUT     the folder the archive is written to
# VERSION is the workspace's version (Cargo.toml). Prints the archive's path.
set -euo pipefail

die() { printf 'release-archive: %s\n' "$*" >&2; exit 2; }

[ $# -eq 3 ] || die "usage: scripts/release-archive.sh BINARY TARGET OUT"
binary=$1 target=$2 out=$3
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$binary" ] || die "$binary is not an executable file"
[[ "$target" =~ ^[a-z0-9_]+(-[a-z0-9_.]+){2,3}$ ]] || die "$target is not a target triple"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\([^"]*\)"$/\1/p' "$repo/Cargo.toml")
[ -n "$version" ] || die "no version in $repo/Cargo.toml's [workspace.package]"
# The binary must be this version's.
reported=$("$binary" --version) || die "$binary --version failed"
[ "$reported" = "toolgate $version" ] || die "$binary says \"$reported\", not \"toolgate $version\""

name="toolgate-$version-$target"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/$name" "$out"
install -m 0755 "$binary" "$work/$name/toolgate"
install -m 0644 "$repo/README.md" "$work/$name/README.md"
tar -czf "$out/$name.tar.gz" -C "$work" --owner=0 --group=0 --numeric-owner "$name"
printf '%s\n' "$out/$name.tar.gz"
