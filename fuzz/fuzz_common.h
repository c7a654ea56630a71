/*
 * Shared by the libFuzzer harnesses: the loaders that take a path get the
 * input through an in-memory file (memfd) named /proc/self/fd/N, so that a
 * run touches no disk and the loader sees a regular file of exact size.
 */
#ifndef HOG_FUZZ_COMMON_H
#define HOG_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Replaces the content of one memfd per process with data[0..size) and
 * returns its /proc path (static buffer). Aborts if the system refuses:
 * a harness that cannot feed its loader must not pass silently. */
static inline const char *hog_fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("hogfuzz", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || ftruncate(fd, (off_t)size) != 0) {
        perror("ftruncate");
        abort();
    }
    size_t done = 0;
    while (done < size) {
        ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
        if (k <= 0) {
            perror("pwrite");
            abort();
        }
        done += (size_t)k;
    }
    return path;
}

#endif
