/*
 * SIGINT and SIGTERM during training (docs/RELIABILITY.md). The library
 * keeps no global state: the command owns the flag, hands its address to
 * hog_train (hog_train_opts.cancel) and the trainer polls it between
 * blocks of rows, finishes the step it is in, writes a checkpoint when one
 * is configured and returns HOG_EINTR. A second signal ends the process at
 * once. Outside training, and at that second signal, a signal that ends
 * the process removes the temporaries of the writes under way first
 * (hog_outfile_remove_all: a stopped convert leaves no 8 GB .tmp behind).
 */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
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
        hog_outfile_remove_all();
        _exit(128 + sig);
    }
    cancel_flag = sig;
}

/* The signals whose default action ends the process (core dumps
 * included), less those that report a fault of its own (SIGSEGV, SIGBUS,
 * ...: state too broken to trust), and SIGKILL, which nobody catches. */
static const int fatal_signals[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE,
                                     SIGALRM, SIGTERM, SIGUSR1, SIGUSR2,
                                     SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF };

/* Removes the temporaries of the writes under way (a convert's .hgb, a
 * prediction file: gigabytes on a disk that may be full), then dies of the
 * signal as it would have: SA_RESETHAND restored the default action, and
 * the raised signal arrives as the handler returns. */
static void on_fatal(int sig)
{
    int e = errno;
    hog_outfile_remove_all();
    raise(sig);
    errno = e;
}

void hog_cli_cleanup_install(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        /* a signal the caller ignores (nohup's SIGHUP) stays ignored */
        if (sigaction(fatal_signals[i], NULL, &old) == 0 &&
            old.sa_handler == SIG_DFL)
            sigaction(fatal_signals[i], &sa, NULL);
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

/* Inputs are mapped, not copied: LIBSVM text while it is parsed
 * (src/io/load.c), a version 2 .hgb's values for as long as the data is
 * used (src/io/hgb.c). When another program truncates such a file in
 * place, touching the lost pages raises SIGBUS with BUS_ADRERR (a mapped
 * address past the end of its file). Say so in a sentence naming the file
 * and its kind instead of dumping core. The file is found from the
 * faulting address in /proc/self/maps; its kind from its magic, or when
 * the truncation left less than that, from the mapping's offset (text is
 * mapped whole from offset 0, a .hgb's pages never include its header).
 * Any other SIGBUS keeps its default action: the handler steps aside and
 * the faulting access repeats. Only async-signal-safe calls here (open,
 * read, close, write). */

static void put(const char *s)
{
    ssize_t k = write(STDERR_FILENO, s, strlen(s));
    (void)k;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Parses hex at *p, advancing it. */
static uintptr_t hex_at(const char **p)
{
    uintptr_t v = 0;
    for (int d; (d = hex_digit(**p)) >= 0; (*p)++)
        v = v * 16 + (uintptr_t)d;
    return v;
}

/* One /proc/self/maps line: "start-end perms offset dev inode   path". */
static bool map_line_has(const char *l, uintptr_t addr, char *path, size_t len,
                         uintptr_t *off)
{
    const char *p = l;
    uintptr_t a = hex_at(&p);
    if (*p++ != '-')
        return false;
    uintptr_t e = hex_at(&p);
    if (addr < a || addr >= e)
        return false;
    for (int field = 0; field < 4 && *p; field++) { /* to the offset, then past inode */
        while (*p == ' ')
            p++;
        if (field == 1)
            *off = hex_at(&p);
        while (*p && *p != ' ')
            p++;
    }
    while (*p == ' ')
        p++;
    if (*p != '/')
        return false; /* anonymous */
    size_t n = strlen(p);
    static const char del[] = " (deleted)";
    if (n >= sizeof del - 1 && !strcmp(p + n - (sizeof del - 1), del))
        n -= sizeof del - 1;
    if (n >= len)
        n = len - 1;
    memcpy(path, p, n);
    path[n] = 0;
    return true;
}

static bool mapped_file(uintptr_t addr, char *path, size_t len, uintptr_t *off)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    static char buf[8192];
    size_t have = 0;
    bool found = false;
    for (;;) {
        ssize_t k = read(fd, buf + have, sizeof buf - 1 - have);
        if (k <= 0)
            break;
        have += (size_t)k;
        buf[have] = 0;
        char *start = buf, *nl;
        while (!found && (nl = strchr(start, '\n'))) {
            *nl = 0;
            found = map_line_has(start, addr, path, len, off);
            start = nl + 1;
        }
        if (found)
            break;
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (have == sizeof buf - 1)
            have = 0; /* a line longer than the buffer: skip it */
    }
    close(fd);
    return found;
}

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
    static char path[4096];
    uintptr_t off = 0;
    if (!mapped_file((uintptr_t)si->si_addr, path, sizeof path, &off)) {
        put("hogtrain: bus error: a memory-mapped input file was truncated "
            "in place while in use; hogtrain never writes its inputs, so "
            "another program changed it. Nothing was saved after the last "
            "checkpoint; rerun on an unchanged file\n");
        _exit(HOG_EXIT_ERROR);
    }
    char head[8];
    bool hgb = off != 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, head, sizeof head) == (ssize_t)sizeof head)
            hgb = memcmp(head, HOG_HGB_MAGIC, 8) == 0;
        close(fd);
    }
    put("hogtrain: bus error: ");
    put(path);
    put(hgb ? ", a .hgb data set mapped into memory, was truncated in place "
              "while in use; hogtrain never writes its inputs, so another "
              "program changed it. Nothing was saved after the last "
              "checkpoint; rerun on an unchanged file\n"
            : ", LIBSVM text mapped into memory while it was parsed, was "
              "truncated in place while in use; hogtrain never writes its "
              "inputs, so another program changed it. Nothing was trained; "
              "rerun on an unchanged file\n");
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
    hog_cli_cleanup_install();
}
