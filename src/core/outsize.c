/* Results the caller allocates: each starts with the sizeof the caller
 * was built with. The library fills a whole struct of its own and hands
 * back the prefix the caller's size covers, so that a caller built
 * against an older, shorter struct keeps working and nothing past its
 * struct is ever written (include/hogtrain.h). */
#include "core.h"

#include <string.h>

static size_t size_of(const void *s)
{
    size_t n;
    memcpy(&n, s, sizeof n);
    return n;
}

hog_status hog_out_take(void *mine, const void *user, size_t full,
                        const char *what, hog_err *err)
{
    size_t n = size_of(user);
    if (n < sizeof n || n > full)
        return hog_errf(err, HOG_EINVAL,
                        "%s.size is %zu, not the size of the struct: set it "
                        "to sizeof(%s) (%zu in this library) before the call",
                        what, n, what, full);
    memset(mine, 0, full);
    memcpy(mine, user, n);
    memcpy(mine, &full, sizeof full);
    return HOG_OK;
}

void hog_out_give(void *user, const void *mine, size_t full)
{
    size_t n = size_of(user);
    if (n > full)
        n = full;
    if (n > sizeof n)
        memcpy((char *)user + sizeof n, (const char *)mine + sizeof n,
               n - sizeof n);
}
