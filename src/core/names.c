/*
 * Feature names kept per weight (struct hog_names, core.h): what
 * --keep-names gathers while Vowpal Wabbit text is hashed (io/names.c),
 * what an .hgm file's names section holds, and what `hogtrain info
 * --weights` prints beside each weight.
 */
#include "core/core.h"

#include <stdlib.h>

void hog_names_free(struct hog_names *nm)
{
    if (!nm)
        return;
    free(nm->pos);
    free(nm->off);
    free(nm->text);
    free(nm);
}

void hog_names_range(const struct hog_names *nm, uint64_t j, uint64_t *lo,
                     uint64_t *hi)
{
    uint64_t a = 0, b = nm ? nm->n : 0;
    while (a < b) { /* the first entry at or past j */
        uint64_t mid = a + (b - a) / 2;
        if (nm->pos[mid] < j)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    while (b < (nm ? nm->n : 0) && nm->pos[b] == j)
        b++;
    *hi = b;
}
