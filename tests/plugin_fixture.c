/*
 * Fixtures for the plugin loader's tests (tests/test_gpu.c), built by the
 * Makefile into build/tests/plugin/:
 *   other_abi.so     a hog_cuda_plugin table of an ABI no hogtrain reads
 *   needs_absent.so  a library needing libhog-absent.so, which is removed
 *                    after the link (as the plugin on a machine without
 *                    the CUDA runtime)
 */
#include <stdint.h>

#if defined(FIXTURE_OTHER_ABI)
/* abi and layout stay the table's first two fields in every ABI. */
struct fixture_table {
    uint32_t abi, layout;
    const char *version;
};
const struct fixture_table hog_cuda_plugin = { 999u, 1u, "9.9.9" };
#elif defined(FIXTURE_ABSENT)
int hog_fixture_absent(void);
int hog_fixture_absent(void) { return 1; }
#elif defined(FIXTURE_NEEDS_ABSENT)
int hog_fixture_absent(void);
int hog_fixture_needs(void);
int hog_fixture_needs(void) { return hog_fixture_absent(); }
const int hog_cuda_plugin = 0;
#endif
