#!/bin/sh
# sass-check.sh LIB - checks the machine code of the probes' kernels (no GPU needed):
# the FMA throughput kernels must hold their FMAs (no dead-code elimination: at
# least CHAINS x UNROLL = 512 per kernel), the cache probes their 16-byte loads and
# the chase its 64-bit dependent loads. Needs cuobjdump and nvdisasm on the PATH
# (CUDA toolkit, or the nvidia-cuda-cuobjdump / -nvdisasm wheels); exits 77 (ctest:
# skipped) without them.
set -u
lib=${1:?usage: sass-check.sh librk_probes.a}
command -v cuobjdump >/dev/null 2>&1 || { echo "cuobjdump not found: skipped"; exit 77; }
command -v nvdisasm >/dev/null 2>&1 || { echo "nvdisasm not found: skipped"; exit 77; }
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
check() { # name kernel opcode minimum
    n=$(count "$2" "$3")
    if [ "$n" -ge "$4" ]; then
        echo "ok   $1: $n x $3"
    else
        echo "FAIL $1: $n x $3, expected at least $4"
        fail=1
    fi
}
check peak_fp32_fma 'k_peakIfE' ' FFMA ' 512
check peak_fp64_fma 'k_peakIdE' ' DFMA ' 512
check peak_fp16x2_fma 'k_peakI7__half2E' ' HFMA2(\.MMA)? R' 512
check peak_bf16x2_fma 'k_peakI14__nv_bfloat162E' ' HFMA2(\.MMA)?\.BF16_V2 ' 512
check bw_l1_read 'k_l1_read' 'LDG\.E\.128' 4
check bw_l2_read_cg 'k_l2_readILi0' 'LDG\.E\.128\.STRONG\.GPU' 4
check bw_l2_read_nc 'k_l2_readILi1' 'LDG\.E\.NA\.128\.CONSTANT' 4
check bw_shared_read 'k_shared_readI' 'LDS\.128' 4
check bw_shared_read_32 'k_shared_read32' ' LDS R' 16
check lat_issue_shared_lds 'k_issue_ldsILi256ELb0' ' LDS R' 32
check lat_issue_shared_ffma 'k_issue_ldsILi256ELb0' ' FFMA ' 256
check lat_chase 'k_chase' 'LDG\.E\.64' 16
exit $fail
