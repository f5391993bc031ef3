#!/bin/sh
# Every C file outside tests/ is as clang-format leaves it (.clang-format at
# the root: the house style). Skips (77) where clang-format is not installed.
# usage: format.sh SOURCE_ROOT
cd "$1" || exit 1
format=$(command -v clang-format || command -v clang-format-14) || {
    echo "no clang-format: skipped"
    exit 77
}
files=$(git ls-files '*.c' '*.h' '*.cu' 2>/dev/null | grep -v '^tests/') ||
    files=$(find audit bench examples include kernels loader policy runtime scaler shim tools \
        -name '*.[ch]' -o -name '*.cu')
failed=0
for f in $files; do
    if ! "$format" --dry-run --Werror "$f" 2>/dev/null; then
        echo "FAIL $f is not formatted (run: $format -i $f)"
        failed=$((failed + 1))
    fi
done
echo "format: $(echo "$files" | wc -l) files, $failed not formatted"
[ "$failed" -eq 0 ]
