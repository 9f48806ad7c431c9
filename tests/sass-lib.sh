# sass-lib.sh - sourced by tests/*/sass-check.sh: the machine code of a library and counts in it.
#   sass_open LIB        dumps LIB's SASS into $sass (removed on exit); exits 77 (ctest: skipped)
#                        without cuobjdump and nvdisasm (CUDA toolkit, or the
#                        nvidia-cuda-cuobjdump / -nvdisasm wheels), 1 if the dump fails
#   count K OP           instructions matching regex OP inside kernels whose name matches K
#   in_range NAME K OP MIN MAX
#                        prints ok or FAIL for that count; a FAIL sets fail=1
#   loads_lead_loop NAME K N
#                        in the first loop (by address) of the kernel matching K whose body holds
#                        exactly N unpredicated LDGs, checks that all N are issued before the
#                        first FFMA/DFMA that reads a register one of them loaded; prints ok or
#                        FAIL (a FAIL sets fail=1). The first such loop is the main one: nvcc puts
#                        an unrolled loop ahead of its remainder, and the outer loop holds more.
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
loads_lead_loop() {
    verdict=$(awk -v k="$2" -v want="$3" '
        function hex(h,  i, v) { # mawk has no strtonum
            v = 0; sub(/^0x/, "", h); match(h, /^[0-9a-f]*/); h = substr(h, 1, RLENGTH)
            for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
            return v
        }
        /Function :/ { if (done) exit; inside = ($3 ~ k); if (inside) done = 1; next }
        !inside { next }
        match($0, /\/\*[0-9a-f]+\*\/ +[^;]*;/) {
            s = substr($0, RSTART, RLENGTH); sub(/;$/, "", s)
            addr = hex(substr(s, 3, index(s, "*/") - 3)); sub(/^[^ ]+ +/, "", s)
            n++; at[n] = addr; text[n] = s
        }
        END {
            best = -1
            for (i = 1; i <= n; i++) {
                if (text[i] !~ /BRA 0x/) continue
                t = text[i]; sub(/.*BRA /, "", t); lo = hex(t)
                if (lo >= at[i]) continue
                c = 0
                for (j = 1; j <= n; j++)
                    if (at[j] >= lo && at[j] <= at[i] && text[j] ~ /^LDG\./) c++
                if (c == want && (best < 0 || lo < best)) { best = lo; hi = at[i] }
            }
            if (best < 0) { print "no loop with " want " unpredicated LDGs"; exit }
            seen = 0; late = 0; used = 0
            for (j = 1; j <= n; j++) {
                if (at[j] < best || at[j] > hi) continue
                split(text[j], w, /[ ,]+/)
                op = (w[1] ~ /^@/) ? w[2] : w[1]
                if (text[j] ~ /^LDG\./) {
                    seen++; if (used) late++
                    r = w[2]; sub(/^R/, "", r); r += 0
                    nr = op ~ /\.128/ ? 4 : op ~ /\.64/ ? 2 : 1
                    for (q = 0; q < nr; q++) areg[r + q] = 1
                } else if (op ~ /^[FD]FMA/) {
                    for (q = (w[1] ~ /^@/) ? 4 : 3; q in w; q++) {
                        r = w[q]; sub(/\..*/, "", r)
                        if (r ~ /^R[0-9]+$/ && (substr(r, 2) + 0) in areg) used = 1
                    }
                }
            }
            printf "%d of %d in the loop at %x before the first FMA using one\n", seen - late, seen, best
        }' "$sass")
    case "$verdict" in
    "$3 of $3 "*) echo "ok   $1: $verdict" ;;
    *) echo "FAIL $1: $verdict, expected all $3"; fail=1 ;;
    esac
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
