/*
 * spin: the pause of a spin-wait loop, the one copy for every module that
 * spins (core's striped-lock spinlock, the pool's waits, the spinning
 * barrier of pool/spin.h). It lives in core because core's lock spins and
 * core includes nothing above it; the barrier built on it is pool's.
 */
#ifndef HOG_CORE_SPIN_H
#define HOG_CORE_SPIN_H

/* One turn of a spin-wait: tells the CPU that the thread only waits (x86
 * pause, arm64 yield), so that it leaves the core's shared resources to a
 * hyperthread sibling and does not flood the memory system with loads of
 * the line it polls. Nothing on other CPUs. */
static inline void hog_spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
