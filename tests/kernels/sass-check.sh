#!/bin/sh
# sass-check.sh LIB - checks in the machine code of the kernels (no GPU needed) what the model
# takes from the source: TSM2 V0 and V1 unroll their loop over k (KERNELS_TSM2_V0_UNROLL,
# KERNELS_TSM2_V1_UNROLL in kernels/kernels.h), so a kernel holds at least one unrolled step's
# global loads, U of A and U x nc of B (nc columns of C per thread), where the loop not
# unrolled holds 1 + nc; the seeds' shared-memory kernels load one element at a time
# (kernels_smem_load_bytes: LDS in fp32, LDS.64 in fp64, no LDS.128). Needs cuobjdump (CUDA
# toolkit); exits 77 (ctest: skipped) without it.
set -u
lib=${1:?usage: sass-check.sh librk_kernels.a}
command -v cuobjdump >/dev/null 2>&1 || { echo "cuobjdump not found: skipped"; exit 77; }
sass=$(mktemp) || exit 1
trap 'rm -f "$sass"' EXIT
cuobjdump -sass "$lib" >"$sass" 2>&1 || { echo "cuobjdump failed on $lib"; exit 1; }

fail=0
# count KERNEL_REGEX OPCODE_REGEX: instructions matching OPCODE inside kernels matching KERNEL
count() {
    awk -v k="$1" -v op="$2" '
        /Function :/ { inside = ($3 ~ k) }
        inside && $0 ~ op { n++ }
        END { print n + 0 }' "$sass"
}
check() { # name kernel unroll nc
    n=$(count "$2" ' LDG\.')
    want=$(($3 * (1 + $4)))
    if [ "$n" -ge "$want" ]; then
        echo "ok   $1: $n global loads (one step unrolled $3 times: $want)"
    else
        echo "FAIL $1: $n global loads, expected at least $want (unroll $3, $4 columns)"
        fail=1
    fi
}
for t in f d; do
    check "tsm2_v0 $t" "tsm2_v0_kernelI${t}E" 4 1
    check "tsm2_v1 $t nc 1" "tsm2_v1_kernelI${t}Li1EE" 4 1
    check "tsm2_v1 $t nc 2" "tsm2_v1_kernelI${t}Li2EE" 4 2
    check "tsm2_v1 $t nc 4" "tsm2_v1_kernelI${t}Li4EE" 4 4
    check "tsm2_v1 $t nc 8" "tsm2_v1_kernelI${t}Li8EE" 2 8
    check "tsm2_v1 $t nc 16" "tsm2_v1_kernelI${t}Li16EE" 1 16
done
# width KERNEL_REGEX OPCODE_REGEX MIN MAX: shared loads of one width
width() {
    n=$(count "$2" "$3")
    if [ "$n" -ge "$4" ] && [ "$n" -le "$5" ]; then
        echo "ok   $1: $n x$3"
    else
        echo "FAIL $1: $n x$3, expected $4..$5"
        fail=1
    fi
}
for k in stso_kernel stmo_kernel stmvb_kernel smem001_kernel tiled_kernel border_kernel \
    padded_kernel; do
    width "$k fp32 4-byte" "${k}If" ' LDS R' 1 1000000
    width "$k fp32 no 8/16-byte" "${k}If" ' LDS\.(64|128) ' 0 0
    width "$k fp64 8-byte" "${k}Id" ' LDS\.64 ' 1 1000000
    width "$k fp64 no 16-byte" "${k}Id" ' LDS\.128 ' 0 0
done
exit $fail
