/*
 * SIGINT and SIGTERM during training (docs/RELIABILITY.md). The library
 * keeps no global state: the command owns the flag, hands its address to
 * hog_train (hog_train_opts.cancel) and the trainer polls it between
 * blocks of rows, finishes the step it is in, writes a checkpoint when one
 * is configured and returns HOG_EINTR. A second signal ends the process at
 * once.
 */
#include "cli/cli.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t cancel_flag;

static void on_signal(int sig)
{
    if (cancel_flag) { /* the second one: no more waiting */
        static const char msg[] = "hogtrain: interrupted again; exiting "
                                  "at once\n";
        ssize_t k = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)k;
        _exit(128 + sig);
    }
    cancel_flag = sig;
}

const volatile sig_atomic_t *hog_cli_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    cancel_flag = 0;
    return &cancel_flag;
}

/* A version 2 .hgb's values are mapped, not copied (src/io/hgb.c): when
 * another program truncates the file in place while hogtrain runs,
 * touching the lost pages raises SIGBUS with BUS_ADRERR (a mapped address
 * past the end of its file). Say so in a sentence instead of dumping core.
 * Any other SIGBUS keeps its default action: the handler steps aside and
 * the faulting access repeats. Only async-signal-safe calls here. */
static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (!si || si->si_code != BUS_ADRERR) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        return;
    }
    static const char msg[] =
        "hogtrain: bus error: a memory-mapped input file (a .hgb data set) "
        "was truncated in place while in use; hogtrain never writes its "
        "inputs, so another program changed it. Nothing was saved after the "
        "last checkpoint; rerun on an unchanged file\n";
    ssize_t k = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)k;
    _exit(HOG_EXIT_ERROR);
}

void hog_cli_sigbus_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

void hog_cli_signals_restore(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}
