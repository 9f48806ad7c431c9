#!/bin/sh
# sass-check.sh LIB - checks in the machine code of the kernels (no GPU needed) what the model
# takes from the source: TSM2 V0 and V1 unroll their loop over k (KERNELS_TSM2_V0_UNROLL,
# KERNELS_TSM2_V1_UNROLL in kernels/kernels.h), so a kernel holds at least one unrolled step's
# global loads, U of A and U x nc of B (nc columns of C per thread), where the loop not
# unrolled holds 1 + nc; and in the main loop each group's loads of A are all issued before
# the first FMA that uses one (loads_lead_loop: the unpredicated LDGs; V0's and nc = 1's loads
# of B are unpredicated too), so a thread has U elements of A in flight, the bytes in flight
# the model takes (cli/model.c bytes_in_flight_per_thread): nvcc's schedule of the plain
# unrolled loop split them into up to four rounds in fp64, and V1 fp64 nc 2 and nc 8 into two
# until V1 got its barrier (kernels/tsm2_v01.cu); the seeds' shared-memory kernels load one
# element at a time (kernels_smem_load_bytes: LDS in fp32, LDS.64 in fp64, no LDS.128).
# Needs cuobjdump and nvdisasm (tests/sass-lib.sh); exits 77 (ctest: skipped) without them.
set -u
lib=${1:?usage: sass-check.sh librk_kernels.a}
. "$(dirname "$0")/../sass-lib.sh"
sass_open "$lib"
check() { # name kernel unroll nc: at least one unrolled step's global loads, A's in one round
    in_range "$1 (unroll $3, $4 columns)" "$2" ' LDG\.' $(($3 * (1 + $4))) 1000000000
    if [ "$4" = 1 ]; then a=$((2 * $3)); else a=$3; fi
    loads_lead_loop "$1 (a group's loads of A in flight)" "$2" $a
}
for t in f d; do
    check "tsm2_v0 $t" "tsm2_v0_kernelI${t}E" 4 1
    check "tsm2_v1 $t nc 1" "tsm2_v1_kernelI${t}Li1EE" 4 1
    check "tsm2_v1 $t nc 2" "tsm2_v1_kernelI${t}Li2EE" 4 2
    check "tsm2_v1 $t nc 4" "tsm2_v1_kernelI${t}Li4EE" 4 4
    check "tsm2_v1 $t nc 8" "tsm2_v1_kernelI${t}Li8EE" 2 8
    check "tsm2_v1 $t nc 16" "tsm2_v1_kernelI${t}Li16EE" 1 16
done
for k in stso_kernel stmo_kernel stmvb_kernel smem001_kernel tiled_kernel border_kernel \
    padded_kernel; do
    in_range "$k fp32 4-byte" "${k}If" ' LDS R' 1 1000000
    in_range "$k fp32 no 8/16-byte" "${k}If" ' LDS\.(64|128) ' 0 0
    in_range "$k fp64 8-byte" "${k}Id" ' LDS\.64 ' 1 1000000
    in_range "$k fp64 no 16-byte" "${k}Id" ' LDS\.128 ' 0 0
done
exit $fail
