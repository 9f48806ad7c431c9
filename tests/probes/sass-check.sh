#!/bin/sh
# sass-check.sh LIB - checks the machine code of the probes' kernels (no GPU needed):
# the FMA throughput kernels must hold their FMAs (no dead-code elimination: at
# least CHAINS x UNROLL = 512 per kernel), the cache probes their 16-byte loads, the
# chase its 64-bit dependent loads, and the copy kernel (DRAM copy, peer probes) its 16-byte
# loads and stores. Needs cuobjdump and nvdisasm (tests/sass-lib.sh);
# exits 77 (ctest: skipped) without them.
set -u
lib=${1:?usage: sass-check.sh librk_probes.a}
. "$(dirname "$0")/../sass-lib.sh"
sass_open "$lib"
check() { in_range "$1" "$2" "$3" "$4" 1000000000; } # name kernel opcode minimum
check peak_fp32_fma 'k_peakIfE' ' FFMA ' 512
check peak_fp64_fma 'k_peakIdE' ' DFMA ' 512
check peak_fp16x2_fma 'k_peakI7__half2E' ' HFMA2(\.MMA)? R' 512
check peak_bf16x2_fma 'k_peakI14__nv_bfloat162E' ' HFMA2(\.MMA)?\.BF16_V2 ' 512
check bw_l1_read 'k_l1_read' 'LDG\.E\.128' 4
check bw_l2_read_cg 'k_l2_readILi0' 'LDG\.E\.128\.STRONG\.GPU' 4
check bw_l2_read_nc 'k_l2_readILi1' 'LDG\.E\.NA\.128\.CONSTANT' 4
check bw_shared_read 'k_shared_readI.*ELi16EE' 'LDS\.128' 4
check bw_shared_read_32 'k_shared_readI.*ELi4EE' ' LDS R' 16
check lat_issue_shared_lds 'k_issue_ldsILi256ELb0' ' LDS R' 32
check lat_issue_shared_ffma 'k_issue_ldsILi256ELb0' ' FFMA ' 256
check lat_chase 'k_chase' 'LDG\.E\.64' 16
# the DRAM copy and the peer probes' SM copies: four 16-byte loads, then four stores
check copy_ldg 'pt_k_copy' 'LDG\.E\.128' 4
check copy_stg 'pt_k_copy' 'STG\.E\.128' 4
exit $fail
