# sass-lib.sh - sourced by tests/*/sass-check.sh: the machine code of a library and counts in it.
#   sass_open LIB        dumps LIB's SASS into $sass (removed on exit); exits 77 (ctest: skipped)
#                        without cuobjdump and nvdisasm (CUDA toolkit, or the
#                        nvidia-cuda-cuobjdump / -nvdisasm wheels), 1 if the dump fails
#   count K OP           instructions matching regex OP inside kernels whose name matches K
#   in_range NAME K OP MIN MAX
#                        prints ok or FAIL for that count; a FAIL sets fail=1
#   max_run K OP STOP    the longest run of instructions matching OP with none matching STOP
#                        between them, inside kernels whose name matches K
#   run_at_least NAME K OP STOP MIN
#                        prints ok or FAIL for max_run >= MIN; a FAIL sets fail=1
fail=0
sass_open() {
    command -v cuobjdump >/dev/null 2>&1 || { echo "cuobjdump not found: skipped"; exit 77; }
    command -v nvdisasm >/dev/null 2>&1 || { echo "nvdisasm not found: skipped"; exit 77; }
    sass=$(mktemp) || exit 1
    trap 'rm -f "$sass"' EXIT
    cuobjdump -sass "$1" >"$sass" 2>&1 || { echo "cuobjdump failed on $1"; exit 1; }
}
count() {
    awk -v k="$1" -v op="$2" '
        /Function :/ { inside = ($3 ~ k) }
        inside && $0 ~ op { n++ }
        END { print n + 0 }' "$sass"
}
in_range() {
    n=$(count "$2" "$3")
    if [ "$n" -ge "$4" ] && [ "$n" -le "$5" ]; then
        echo "ok   $1: $n x $3"
    else
        echo "FAIL $1: $n x $3, expected $4..$5"
        fail=1
    fi
}
max_run() {
    awk -v k="$1" -v op="$2" -v stop="$3" '
        /Function :/ { inside = ($3 ~ k); run = 0 }
        inside && $0 ~ stop { run = 0 }
        inside && $0 ~ op { run++; if (run > best) best = run }
        END { print best + 0 }' "$sass"
}
run_at_least() {
    n=$(max_run "$2" "$3" "$4")
    if [ "$n" -ge "$5" ]; then
        echo "ok   $1: $n x $3 before a $4"
    else
        echo "FAIL $1: $n x $3 before a $4, expected at least $5"
        fail=1
    fi
}
