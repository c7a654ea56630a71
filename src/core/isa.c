/*
 * Which copy of the vector kernels runs (core/isa.h), and the build's
 * description for hog_build_info().
 *
 * A PORTABLE build's baseline is x86-64-v2 (SSE4.2, POPCNT: every x86-64
 * server since 2009, RHEL 9's floor); its kernel files are compiled again
 * for x86-64-v3 (AVX2, FMA, BMI2: the hand-written lanes) and x86-64-v4
 * (AVX-512, which only the compiler's own vectorization uses). The plain
 * names are GNU indirect functions: the loader runs the resolver once,
 * before main and before any constructor, and every call after goes
 * straight to the copy picked, with no test on the way. Each copy has
 * the same arithmetic as a native build that has the same features (the
 * C11 mode contracts no multiply-add the code does not write), so a
 * PORTABLE build's models equal the native build's on the same machine.
 */
#include "core/isa.h"
#include "core/sgd.h"

#ifndef HOG_BUILD_MARCH /* the Makefile's -march, or none given */
#define HOG_BUILD_MARCH "default"
#endif

#if defined(__AVX2__) && defined(__FMA__)
#define LANES_BUILT "avx2+fma"
#else
#define LANES_BUILT "c"
#endif

#ifdef HOG_PORTABLE

enum level { LEVEL_V2, LEVEL_V3, LEVEL_V4 };

/* The resolvers run before libgcc's constructor fills the CPU model:
 * __builtin_cpu_init() does it first (GCC's documented duty for ifunc
 * resolvers). cpuid is read there once; later calls read the model. */
static enum level level_of_cpu(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4"))
        return LEVEL_V4;
    if (__builtin_cpu_supports("x86-64-v3"))
        return LEVEL_V3;
    return LEVEL_V2;
}

/* A switch rather than a table: the resolver runs before relocations of
 * data are certain to be applied, and a function's address taken in code
 * needs none. */
#define HOG_ISA_BIND(f)                                                       \
    extern __typeof__(f) f##_v2, f##_v3, f##_v4;                              \
    static __typeof__(f) *pick_##f(void)                                      \
    {                                                                         \
        switch (level_of_cpu()) {                                             \
        case LEVEL_V4: return f##_v4;                                         \
        case LEVEL_V3: return f##_v3;                                         \
        default: return f##_v2;                                               \
        }                                                                     \
    }                                                                         \
    __typeof__(f) f __attribute__((ifunc("pick_" #f)));
HOG_ISA_KERNELS(HOG_ISA_BIND)

const char *hog_build_info(void)
{
    switch (level_of_cpu()) {
    case LEVEL_V4:
        return "build=portable march=" HOG_BUILD_MARCH
               " kernels=x86-64-v4 lanes=avx2+fma";
    case LEVEL_V3:
        return "build=portable march=" HOG_BUILD_MARCH
               " kernels=x86-64-v3 lanes=avx2+fma";
    default:
        return "build=portable march=" HOG_BUILD_MARCH
               " kernels=x86-64-v2 lanes=c";
    }
}

#else

const char *hog_build_info(void)
{
    return "build=native march=" HOG_BUILD_MARCH
           " kernels=native lanes=" LANES_BUILT;
}

#endif
