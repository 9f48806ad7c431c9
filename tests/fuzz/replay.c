/*
 * replay.c - a plain-C main() for the fuzz targets, so that any compiler (CI's gcc) checks
 * the corpus: each argument is a file, or a folder whose files are read, and every file
 * is fed once to LLVMFuzzerTestOneInput. Exits 0 when all ran (a crash or a sanitizer
 * finding ends the process first), 1 when an argument cannot be read or no input was found.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;
    if (!f) {
        fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    do {
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap = cap ? cap * 2 : 4096);
            if (!grown) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = grown;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 1;
}

/* Replays path (a file or a folder of files); the number of inputs, or -1. */
static int replay(const char *path)
{
    struct stat st;
    DIR *dir;
    struct dirent *e;
    int count = 0;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path);
    if (!(dir = opendir(path)))
        return -1;
    while ((e = readdir(dir)) != NULL) {
        char full[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(full, sizeof full, "%s/%s", path, e->d_name);
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (replay_file(full) < 0) {
            closedir(dir);
            return -1;
        }
        count++;
    }
    closedir(dir);
    return count;
}

int main(int argc, char **argv)
{
    int total = 0;
    for (int i = 1; i < argc; i++) {
        int n = replay(argv[i]);
        if (n < 0)
            return 1;
        total += n;
    }
    printf("replay: %d inputs, no crash\n", total);
    return total > 0 ? 0 : 1;
}
