#!/bin/sh
# The documents against the tree: README.md is at most 8 KB and starts with
# what to type; every page of docs/families names a family of
# policy/data/families.txt ("Family: NAME"), every family has a page, and
# each page's name is also a wing (shim/NAME) and a test folder
# (tests/NAME): a family's code, tests and docs at three paths with one
# name. Every docs/... path the documents name exists. ampshim(7) (its
# source, man/ampshim.7.in, without the tables the build fills in) and
# ampctl(1) are references of at most 800 lines: how and why, and the
# figures, go to docs/ (numerics.md, audit.md, cuda.md, ...).
# usage: docs.sh SOURCE_ROOT
root=$1
cd "$root" || exit 1
passed=0 failed=0
check() { if eval "$2"; then passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi; }

size=$(wc -c <README.md)
check "README.md is at most 8192 bytes (it is $size)" '[ "$size" -le 8192 ]'
check "README.md starts with what to type (an indented command after its title)" \
    'sed -n 3p README.md | grep -q "^    [A-Za-z]"'

for page in man/ampshim.7.in man/ampctl.1; do
    lines=$(wc -l <"$page")
    check "$page is a reference of at most 800 lines (it has $lines; the long form goes to docs/)" \
        '[ "$lines" -le 800 ]'
done

families=$(awk '!/^#/ && NF { print $1 }' policy/data/families.txt)
named=""
for page in docs/families/*.md; do
    name=$(basename "$page" .md)
    family=$(sed -n 's/^Family: \([A-Z_]*\).*/\1/p' "$page" | head -1)
    check "$page names a family of policy/data/families.txt (Family: $family)" \
        '[ -n "$family" ] && echo "$families" | grep -qx "$family"'
    named="$named $family"
    check "$page has its wing shim/$name" '[ -d "shim/$name" ]'
    check "$page has its test folder tests/$name" '[ -d "tests/$name" ]'
done
for family in $families; do
    check "family $family has a page in docs/families" 'echo "$named" | tr " " "\n" | grep -qx "$family"'
done

for path in $(cat README.md docs/*.md docs/families/*.md | grep -o 'docs/[a-z_/]*\(\.md\)\?' | sort -u); do
    check "$path, named in the documents, exists" '[ -e "$path" ]'
done
echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
