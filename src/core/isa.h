/*
 * The vector kernels' copies in a PORTABLE build (make PORTABLE=1).
 *
 * The kernel files, sgd.c and sgd_catchup.c (the SGD row steps of every
 * kind, AdaGrad's lanes, FTRL's gathers, the segment end), choose their
 * AVX2/FMA paths with the preprocessor. A PORTABLE build compiles them
 * once per x86-64 level: -DHOG_ISA=v2 at the build's baseline, v3 and v4
 * with -march=x86-64-v3 and -v4 (the Makefile's ISA_LEVELS). Each copy's
 * entry points carry its level (hog_sgd_run_tally_v3, by the defines
 * below, which sgd.h reads first), and core/isa.c binds the plain names to
 * the copy this CPU runs, once, at load time (GNU ifunc). Everything else
 * is compiled once. A native build (no HOG_ISA) names them plainly.
 *
 * HOG_ISA_KERNELS lists the kernel files' functions, the one list isa.c
 * binds: a function added there without its define below is defined by
 * every copy (a duplicate at the PORTABLE link), one listed without it an
 * undefined reference; either fails the build, never silently.
 */
#ifndef HOG_ISA_H
#define HOG_ISA_H

#define HOG_ISA_KERNELS(X)                                                    \
    X(hog_sgd_run_tally)                                                      \
    X(hog_sgd_run_mode)                                                       \
    X(hog_sgd_run)                                                            \
    X(hog_sgd_step)                                                           \
    X(hog_sgd_split_step)                                                     \
    X(hog_sgd_apply_many)                                                     \
    X(hog_sgd_apply)                                                          \
    X(hog_sgd_catch_up_range)                                                 \
    X(hog_sgd_segment_end)                                                    \
    X(hog_sgd_shrink_lanes)

#ifdef HOG_ISA
#define HOG_ISA_CAT_(f, level) f##_##level
#define HOG_ISA_CAT(f, level) HOG_ISA_CAT_(f, level)
#define hog_sgd_run_tally HOG_ISA_CAT(hog_sgd_run_tally, HOG_ISA)
#define hog_sgd_run_mode HOG_ISA_CAT(hog_sgd_run_mode, HOG_ISA)
#define hog_sgd_run HOG_ISA_CAT(hog_sgd_run, HOG_ISA)
#define hog_sgd_step HOG_ISA_CAT(hog_sgd_step, HOG_ISA)
#define hog_sgd_split_step HOG_ISA_CAT(hog_sgd_split_step, HOG_ISA)
#define hog_sgd_apply_many HOG_ISA_CAT(hog_sgd_apply_many, HOG_ISA)
#define hog_sgd_apply HOG_ISA_CAT(hog_sgd_apply, HOG_ISA)
#define hog_sgd_catch_up_range HOG_ISA_CAT(hog_sgd_catch_up_range, HOG_ISA)
#define hog_sgd_segment_end HOG_ISA_CAT(hog_sgd_segment_end, HOG_ISA)
#define hog_sgd_shrink_lanes HOG_ISA_CAT(hog_sgd_shrink_lanes, HOG_ISA)
#endif

#endif
