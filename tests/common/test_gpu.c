/*
 * test_gpu.c - common's description of a GPU that needs no GPU: the UUID text.
 *
 * Case map:
 *   G01 rk_gpu_uuid: 16 bytes as "GPU-" and 8-4-4-4-12 lowercase hex digits (what the probes
 *       and kernels sessions both store, so that a device is one database row), every byte
 *       value once; a short buffer truncates and stays terminated
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common.h"

#include <stdio.h>
#include <string.h>

/* G01 */
static void uuid_text(void **state)
{
    const unsigned char h100[16] = {0x5f, 0x3e, 0x0a, 0x91, 0x00, 0xff, 0x12, 0xab,
                                    0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0x9a};
    unsigned char bytes[16];
    char s[48], hex[9]; /* room for any int: -O0 cannot tell that v + 15 < 256 */
    (void)state;
    rk_gpu_uuid(h100, s, sizeof s);
    assert_string_equal(s, "GPU-5f3e0a91-00ff-12ab-cdef-01234567899a");
    assert_int_equal(strlen(s), 40);
    for (int v = 0; v < 256; v += 16) {
        for (int i = 0; i < 16; i++)
            bytes[i] = (unsigned char)(v + i);
        rk_gpu_uuid(bytes, s, sizeof s);
        snprintf(hex, sizeof hex, "%02x", v + 15);
        assert_memory_equal(s + 38, hex, 2); /* the last byte, lowercase */
    }
    rk_gpu_uuid(h100, s, 9);
    assert_string_equal(s, "GPU-5f3e");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uuid_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
