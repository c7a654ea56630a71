/* Fork-join of a few independent items (forkjoin.h). */
#include "core/forkjoin.h"

#include <pthread.h>
#include <stdlib.h>

void hog_fork_join(void *items, size_t stride, unsigned n,
                   void *(*fn)(void *), enum hog_fork_mode mode)
{
    char *it = items;
    unsigned first = mode == HOG_FORK_CALLER_FIRST && n > 0;
    pthread_t *th = n > first ? malloc((n - first) * sizeof *th) : NULL;
    unsigned started = first;
    for (unsigned i = first; th && i < n; i++, started++)
        if (pthread_create(&th[i - first], NULL, fn, it + i * stride) != 0)
            break;
    for (unsigned i = started; i < n; i++)
        fn(it + i * stride);
    if (first)
        fn(it);
    for (unsigned i = first; i < started; i++)
        pthread_join(th[i - first], NULL);
    free(th);
}
