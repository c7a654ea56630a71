/*
 * The job's shared secret (--secret-file), read from a file: 16 to
 * HOG_NET_MAX_SECRET bytes, one trailing newline dropped. The TCP
 * handshake proves it (auth.c); the file is the command's business.
 */
#include "net/net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hog_status hog_net_read_secret(const char *path, unsigned char **out,
                               size_t *len, hog_err *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return hog_errf(err, HOG_EIO, "%s: cannot open the secret file: %s",
                        path, strerror(errno));
    unsigned char *b = malloc(HOG_NET_MAX_SECRET + 1);
    if (!b) {
        fclose(f);
        return hog_errf(err, HOG_ENOMEM, "out of memory");
    }
    size_t n = fread(b, 1, HOG_NET_MAX_SECRET + 1, f);
    fclose(f);
    if (n > HOG_NET_MAX_SECRET) {
        free(b);
        return hog_errf(err, HOG_EINVAL, "%s: the secret is longer than %d "
                        "bytes", path, HOG_NET_MAX_SECRET);
    }
    if (n && b[n - 1] == '\n')
        n--;
    if (n < 16) {
        free(b);
        return hog_errf(err, HOG_EINVAL, "%s: the secret has %zu bytes; use "
                        "at least 16 (e.g. head -c 32 /dev/urandom | base64)",
                        path, n);
    }
    *out = b;
    *len = n;
    return HOG_OK;
}
