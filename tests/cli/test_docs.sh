#!/usr/bin/env bash
# The repository explains itself: no file refers to anything outside it (the old
# external spec: the sibling "shared" directory, its spec/ folder, its FORMAT file), docs/format.md exists, and
# every "docs/format.md §N" citation in the sources names a section that docs/format.md
# has. README says which license LICENSE holds.
#
# Usage: bash tests/cli/test_docs.sh
set -u

source "$(dirname "$0")/testlib.sh"
cd "$root" || exit 1
spec=docs/format.md

# Tracked and untracked-but-not-ignored files when this is a git checkout, else all files
# outside build directories.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files --cached --others --exclude-standard)
else
  files=$(find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||')
fi
check "repository files listed" test -n "$files"

# This test spells the patterns itself, so it is the one file left out. The patterns are
# assembled so that no line here contains them either.
self=tests/cli/test_docs.sh
outside=$(printf '%s\n' "$files" | grep -vx "$self" | while IFS= read -r f; do
  [ -f "$f" ] && grep -IlE '[.][.]/shar[e]d|shar[e]d/spec|FORMA[T][.]md' -- "$f"
done)
if [ -z "$outside" ]; then ok; else fail "files referring outside the repository (use $spec): $(echo $outside)"; fi

check "$spec exists" test -s "$spec"
sections=$(sed -n 's/^## \([0-9][0-9]*\)\. .*/\1/p' "$spec")
check "$spec has numbered sections" test -n "$sections"
# Every §N after a mention of docs/format.md (also in lists like "§4, §10" and ranges "§5-§8").
cited=$(printf '%s\n' "$files" | while IFS= read -r f; do
  [ -f "$f" ] && grep -IhoE 'format\.md[ ,]*(§[0-9]+([ ,and-]+§[0-9]+)*)' -- "$f"
done | grep -oE '§[0-9]+' | tr -d '§' | sort -un)
check "sources cite $spec sections" test -n "$cited"
for n in $cited; do
  if printf '%s\n' "$sections" | grep -qx "$n"; then ok; else fail "a file cites $spec §$n, which does not exist"; fi
done

for part in "static page" "RecordLoc" "schema" "Ragged" "dict.zr" "publish" "flock" "reader must"; do
  if grep -qi "$part" "$spec"; then ok; else fail "$spec does not describe: $part"; fi
done

check "LICENSE exists" test -s LICENSE
license=$(head -n 1 LICENSE | awk '{print $1}')
if grep -q "$license" README.md && grep -q "LICENSE" README.md; then ok; else fail "README does not name the $license license"; fi
finish
