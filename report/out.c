/*
 * out.c - the files of a report directory: each written through a temporary file and renamed
 * over the old one (a failure leaves the previous version), and the list of the files written,
 * which report.c keeps in the ownership marker.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

char *rp_out_path(const char *dir, const char *rel, const char *suffix)
{
    size_t len = strlen(dir) + strlen(rel) + strlen(suffix) + 2;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s/%s%s", dir, rel, suffix);
    return s;
}

int rp_out_record(struct rp_out *o, const char *rel)
{
    for (int i = 0; i < o->nfiles; i++)
        if (strcmp(o->files[i], rel) == 0)
            return RK_OK;
    if (o->nfiles == o->capfiles) {
        int cap = o->capfiles ? 2 * o->capfiles : 64;
        char **p = realloc(o->files, (size_t)cap * sizeof *p);
        if (!p)
            return rk_error(RK_ENOMEM, "out of memory listing the report's files");
        o->files = p;
        o->capfiles = cap;
    }
    if (!(o->files[o->nfiles] = strdup(rel)))
        return rk_error(RK_ENOMEM, "out of memory listing the report's files");
    o->nfiles++;
    return RK_OK;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

int rp_out_write(struct rp_out *o, const char *rel, const char *data, size_t len)
{
    char tmpsuf[48];
    char *full = rp_out_path(o->dir, rel, ""), *tmp = NULL;
    int fd = -1, rc = RK_OK, err = 0;
    const char *slash = strchr(rel, '/');

    snprintf(tmpsuf, sizeof tmpsuf, ".tmp%ld", (long)getpid());
    tmp = rp_out_path(o->dir, rel, tmpsuf);
    if (!full || !tmp) {
        rc = rk_error(RK_ENOMEM, "out of memory writing the report");
        goto out;
    }
    if (slash) { /* one level of folder: csv/, plots/ */
        full[strlen(o->dir) + 1 + (size_t)(slash - rel)] = '\0';
        if (mkdir(full, 0777) != 0 && errno != EEXIST) {
            rc = rk_error(RK_EIO,
                          "cannot create '%s': %s; check the permissions of the report "
                          "directory or pass another --out",
                          full, strerror(errno));
            goto out;
        }
        full[strlen(o->dir) + 1 + (size_t)(slash - rel)] = '/';
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write_all(fd, data, len) != 0)
        err = errno;
    if (fd >= 0 && close(fd) != 0 && !err)
        err = errno;
    fd = -1;
    if (!err && rename(tmp, full) != 0)
        err = errno;
    if (err) {
        unlink(tmp);
        rc = rk_error(RK_EIO,
                      "cannot write '%s': %s; check the space and permissions of the "
                      "report directory or pass another --out",
                      full, strerror(err));
        goto out;
    }
    rc = rp_out_record(o, rel);
out:
    free(full);
    free(tmp);
    return rc;
}

int rp_read_file(const char *dir, const char *rel, char **data, size_t *len)
{
    char *full = rp_out_path(dir, rel, ""), *buf = NULL;
    FILE *f = NULL;
    long size;
    int rc = RK_EIO;
    if (!full || !(f = fopen(full, "rb")))
        goto out;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto out;
    if (!(buf = malloc((size_t)size + 1)))
        goto out;
    if (fread(buf, 1, (size_t)size, f) != (size_t)size)
        goto out;
    buf[size] = '\0';
    *data = buf;
    *len = (size_t)size;
    buf = NULL;
    rc = RK_OK;
out:
    if (f)
        fclose(f);
    free(buf);
    free(full);
    return rc;
}

void rp_out_release(struct rp_out *o)
{
    for (int i = 0; i < o->nfiles; i++)
        free(o->files[i]);
    free(o->files);
    o->files = NULL;
    o->nfiles = o->capfiles = 0;
}
