/*
 * cubin.c - ptxas's register count of each kernel, read from a loaded module's cubin (ELF).
 *
 * Why: CUPTI's Activity record reports registersPerThread as allocated, rounded up to the
 * allocation unit (16 for a 12-register kernel on the H100, measured), while users compare with
 * ptxas -v. The driver launch parameters would give the CUfunction for cuFuncGetAttribute, but
 * runtime launches (<<<>>>, cudaLaunchKernel) do not pass through the driver's public launch
 * entry points on CUDA 13 (measured: no driver callback fired for them). Every module that the
 * driver loads is handed to CUPTI's MODULE_LOADED resource callback as a cubin, and the cubin
 * holds what cuobjdump --dump-resource-usage prints.
 *
 * Format (as cuobjdump reads it; checked against ptxas -v on sm_90 cubins): the section
 * ".nv.info" is a sequence of attributes {u8 format, u8 attribute, ...}; format 0x04 (SVAL) is
 * followed by a u16 size and that many bytes, formats 0x01..0x03 occupy 4 bytes in all.
 * Attribute 0x2f (EIATTR_REGCOUNT) carries {u32 symbol index, u32 registers}; the symbol's
 * name (.symtab/.strtab) is the kernel's mangled name.
 *
 * Assumes a little-endian ELF64 image; anything else, or any offset out of bounds, ends the
 * walk quietly (the Activity value is kept). Plain C: tests parse cubins built by nvcc.
 */
#include "backend.h"

#include <stdint.h>
#include <string.h>

#define EIATTR_REGCOUNT 0x2f
#define EIFMT_SVAL      0x04

static int get16(const uint8_t *p, size_t size, size_t off, uint16_t *v)
{
    if (off > size || size - off < 2)
        return 0;
    *v = (uint16_t)(p[off] | p[off + 1] << 8);
    return 1;
}

static int get32(const uint8_t *p, size_t size, size_t off, uint32_t *v)
{
    if (off > size || size - off < 4)
        return 0;
    *v = (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 |
         (uint32_t)p[off + 3] << 24;
    return 1;
}

static int get64(const uint8_t *p, size_t size, size_t off, uint64_t *v)
{
    uint32_t lo, hi;
    if (!get32(p, size, off, &lo) || !get32(p, size, off + 4, &hi))
        return 0;
    *v = (uint64_t)hi << 32 | lo;
    return 1;
}

struct section {
    uint32_t name, type;
    uint64_t offset, size, entsize;
};

static int section(const uint8_t *p, size_t size, uint64_t shoff, uint16_t shentsize, unsigned i,
                   struct section *s)
{
    uint64_t at = shoff + (uint64_t)i * shentsize;
    return get32(p, size, at, &s->name) && get32(p, size, at + 4, &s->type) &&
           get64(p, size, at + 24, &s->offset) && get64(p, size, at + 32, &s->size) &&
           get64(p, size, at + 56, &s->entsize) && s->offset <= size && s->size <= size - s->offset;
}

/* NUL-terminated string at off inside [base, base + len), or NULL. */
static const char *str_at(const uint8_t *p, uint64_t base, uint64_t len, uint64_t off)
{
    if (off >= len)
        return NULL;
    const char *s = (const char *)p + base + off;
    return memchr(s, '\0', len - off) ? s : NULL;
}

int bk_cubin_registers(const uint8_t *elf, size_t size, bk_regcount_fn fn, void *arg)
{
    static const uint8_t magic[] = {0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little */};
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx;
    struct section shstr, s, info = {0}, symtab = {0}, strtab = {0};
    int found = 0;
    if (!elf || size < 64 || memcmp(elf, magic, sizeof magic) != 0)
        return 0;
    if (!get64(elf, size, 0x28, &shoff) || !get16(elf, size, 0x3a, &shentsize) ||
        !get16(elf, size, 0x3c, &shnum) || !get16(elf, size, 0x3e, &shstrndx) || shentsize < 64 ||
        shstrndx >= shnum || !section(elf, size, shoff, shentsize, shstrndx, &shstr))
        return 0;
    for (unsigned i = 0; i < shnum; i++) {
        if (!section(elf, size, shoff, shentsize, i, &s))
            return 0;
        const char *name = str_at(elf, shstr.offset, shstr.size, s.name);
        if (!name)
            continue;
        if (strcmp(name, ".nv.info") == 0)
            info = s;
        else if (strcmp(name, ".symtab") == 0)
            symtab = s;
        else if (strcmp(name, ".strtab") == 0)
            strtab = s;
    }
    if (!info.size || !symtab.size || !strtab.size)
        return 0;
    uint64_t entsize = symtab.entsize ? symtab.entsize : 24;
    for (uint64_t at = info.offset; at + 4 <= info.offset + info.size;) {
        uint8_t format = elf[at], attr = elf[at + 1];
        uint16_t len = 2;
        if (format == EIFMT_SVAL && !get16(elf, size, at + 2, &len))
            break;
        uint64_t next = at + 4 + (format == EIFMT_SVAL ? len : 0);
        if (next > info.offset + info.size)
            break;
        if (format == EIFMT_SVAL && attr == EIATTR_REGCOUNT && len >= 8) {
            uint32_t sym, regs, st_name;
            if (get32(elf, size, at + 4, &sym) && get32(elf, size, at + 8, &regs) &&
                (uint64_t)sym * entsize + 4 <= symtab.size &&
                get32(elf, size, symtab.offset + (uint64_t)sym * entsize, &st_name)) {
                const char *kname = str_at(elf, strtab.offset, strtab.size, st_name);
                if (kname && *kname && regs <= 255) {
                    fn(arg, kname, (int)regs);
                    found++;
                }
            }
        }
        at = next;
    }
    return found;
}
