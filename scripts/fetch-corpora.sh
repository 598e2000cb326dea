#!/usr/bin/env bash
# Fetches the conformance corpora toolgate's tests read into DIR, laid out
# as CI's ../shared/corpora:
#
#   DIR/JSONTestSuite/{test_parsing,test_transform,LICENSE}
#       nst/JSONTestSuite at JSON_TEST_SUITE_COMMIT
#   DIR/JSON-Schema-Test-Suite/{tests/draft2020-12,remotes/…,LICENSE}
#       json-schema-org/JSON-Schema-Test-Suite at SCHEMA_TEST_SUITE_COMMIT
#   DIR/extra, DIR/strict-profile-expectations.tsv
#       the project's own cases, copied from corpora/ in this repository
#
# Then: TOOLGATE_CORPORA=DIR cargo test --workspace
#
# Usage: scripts/fetch-corpora.sh DIR
# With TOOLGATE_CORPORA_TARBALLS=FOLDER the two upstream archives are read
# from FOLDER (named NAME-COMMIT.tar.gz, as the download names them)
# instead of being downloaded; the tests use this to check the layout.
set -euo pipefail

JSON_TEST_SUITE_COMMIT=1ef36fa01286573e846ac449e8683f8833c5b26a
SCHEMA_TEST_SUITE_COMMIT=44401e0c046704b476ec9d2e2fccdaee618f259d

die() { printf 'fetch-corpora: %s\n' "$*" >&2; exit 2; }

[ $# -eq 1 ] || die "usage: scripts/fetch-corpora.sh DIR"
dest=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
[ -d "$repo/corpora/extra" ] || die "no corpora/extra in $repo"
if [ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ]; then
  die "$dest exists and is not empty: name a new or empty folder"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# archive OWNER NAME COMMIT: the archive's path in $work.
archive() {
  local owner=$1 name=$2 commit=$3 file="$work/$2-$3.tar.gz"
  if [ -n "${TOOLGATE_CORPORA_TARBALLS:-}" ]; then
    cp "$TOOLGATE_CORPORA_TARBALLS/$name-$commit.tar.gz" "$file" \
      || die "no $name-$commit.tar.gz in $TOOLGATE_CORPORA_TARBALLS"
  else
    command -v curl >/dev/null || die "curl is needed to download the suites"
    curl -fsSL "https://github.com/$owner/$name/archive/$commit.tar.gz" -o "$file" \
      || die "cannot download $owner/$name at $commit"
  fi
  printf '%s\n' "$file"
}

# unpack ARCHIVE NAME COMMIT: the unpacked top folder.
unpack() {
  local file=$1 name=$2 commit=$3
  mkdir -p "$work/x-$name"
  tar -xzf "$file" -C "$work/x-$name" || die "$file is not a gzip tar archive"
  local top="$work/x-$name/$name-$commit"
  [ -d "$top" ] || die "$file has no $name-$commit/ folder"
  printf '%s\n' "$top"
}

tmp="$work/out"
mkdir -p "$tmp/JSONTestSuite" "$tmp/JSON-Schema-Test-Suite/tests" \
  "$tmp/JSON-Schema-Test-Suite/remotes/draft2019-09"

top=$(unpack "$(archive nst JSONTestSuite "$JSON_TEST_SUITE_COMMIT")" \
  JSONTestSuite "$JSON_TEST_SUITE_COMMIT")
for part in test_parsing test_transform LICENSE; do
  [ -e "$top/$part" ] || die "JSONTestSuite at $JSON_TEST_SUITE_COMMIT has no $part"
  cp -R "$top/$part" "$tmp/JSONTestSuite/"
done

top=$(unpack "$(archive json-schema-org JSON-Schema-Test-Suite "$SCHEMA_TEST_SUITE_COMMIT")" \
  JSON-Schema-Test-Suite "$SCHEMA_TEST_SUITE_COMMIT")
for part in tests/draft2020-12 remotes/draft2020-12 remotes/draft2019-09/ignore-prefixItems.json LICENSE; do
  [ -e "$top/$part" ] || die "JSON-Schema-Test-Suite at $SCHEMA_TEST_SUITE_COMMIT has no $part"
done
cp -R "$top/tests/draft2020-12" "$tmp/JSON-Schema-Test-Suite/tests/"
cp -R "$top/remotes/draft2020-12" "$tmp/JSON-Schema-Test-Suite/remotes/"
cp "$top/remotes/draft2019-09/ignore-prefixItems.json" "$tmp/JSON-Schema-Test-Suite/remotes/draft2019-09/"
cp "$top/LICENSE" "$tmp/JSON-Schema-Test-Suite/"

cp -R "$repo/corpora/extra" "$tmp/"
cp "$repo/corpora/strict-profile-expectations.tsv" "$tmp/"

# Only a complete folder appears at DIR.
mkdir -p "$(dirname "$dest")"
rmdir "$dest" 2>/dev/null || true
mv "$tmp" "$dest"
printf 'corpora in %s: run the tests with TOOLGATE_CORPORA=%s\n' "$dest" "$dest"
