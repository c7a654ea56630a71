/*
 * Read leases on mapped .hgb files (Linux F_SETLEASE).
 *
 * The loader maps the pages of a version 2 file's indices and values
 * MAP_PRIVATE. A private page stays the page cache's until written, so a
 * program that rewrote the file in place after the load's range check
 * could turn an index into a write past the weights, and one that
 * truncated it would make the pages raise SIGBUS. A read lease closes
 * that door. It is taken before the first byte of the file is read, and
 * only when nobody has the file open for writing (F_RDLCK is refused
 * then), so the checks that follow are final. While it is held, another
 * open() of the file for writing, or a truncate(), waits in the kernel
 * and this process gets a real-time signal whose si_fd names the file
 * (F_SETSIG). The handler copies the arrays out of the file's pages and
 * then releases the lease: the writer proceeds, and the loaded data no
 * longer depends on the file.
 *
 * The copy goes to fresh anonymous memory, which mremap(MREMAP_FIXED)
 * then moves over the same addresses in one step: training threads
 * reading the arrays meanwhile see the same bytes before and after (a
 * fault during the move waits for it). Writing each page in place would
 * not do: it makes the page private, but truncation drops even private
 * copies of a file's pages past its new end (they raise SIGBUS). mmap,
 * memcpy, mremap, fcntl and atomics are all async-signal-safe.
 *
 * The kernel waits for the handler at most fs.lease-break-time seconds
 * (45 by default), then lets the writer go anyway: a process stopped
 * (SIGSTOP, a debugger) or with the signal blocked in every thread that
 * long is not protected. A break that comes while the file is still
 * being loaded is left to the loader, which copies when it is done
 * (hog_hgb_lease_publish).
 *
 * The registry below is the library's one piece of process-wide state,
 * and exists because of the signal: its handler has no argument but
 * si_fd, so the files now leased are kept in a fixed table of slots,
 * claimed and released with atomics (no locks, no allocation: a handler
 * may interrupt any of it). A train and a test set loaded together hold
 * two slots.
 */
#include "io/hgb_lease.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* A slot's life: FREE -> CLAIMED (being filled) -> LOADING (lease taken,
 * the file being read) -> ACTIVE (arrays published) -> BREAKING (the
 * handler copying) -> COPIED (lease released) -> CLOSING (being dropped)
 * -> FREE. A break during LOADING makes it PENDING: the loader copies. */
enum slot_state {
    SLOT_FREE, SLOT_CLAIMED, SLOT_LOADING, SLOT_PENDING, SLOT_ACTIVE,
    SLOT_BREAKING, SLOT_COPIED, SLOT_CLOSING
};

struct hog_hgb_lease {
    atomic_int state;
    atomic_int fd;  /* read by the handler to match si_fd */
    void *p;        /* the arrays: set before ACTIVE, read after it */
    size_t len;
};

/* Which real-time signal, counted from SIGRTMIN. */
#define LEASE_SIGNAL_OFFSET 6

static struct {
    pthread_once_t once;
    int signal; /* 0: no handler (the signal was taken), no leases */
    size_t page; /* sysconf(_SC_PAGESIZE), read once outside the handler */
    struct hog_hgb_lease slot[HOG_HGB_LEASES];
} registry = { .once = PTHREAD_ONCE_INIT };

/* Gives [p, p + len) (whole pages) private anonymous memory holding the
 * same bytes; see the top of the file. */
static void copy_out(void *p, size_t len)
{
    void *q = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (q != MAP_FAILED) {
        memcpy(q, p, len);
        if (mremap(q, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, p) == p)
            return;
        munmap(q, len);
    }
    /* No room for a second copy: write every page in place, which makes
     * it private (a rewrite of the file can no longer reach it; a
     * truncation still can, and raises SIGBUS). The write is an atomic
     * or of 0: the same bytes for any thread reading them meanwhile. */
    for (size_t o = 0; o < len; o += registry.page)
        atomic_fetch_or_explicit((_Atomic unsigned char *)((char *)p + o), 0,
                                 memory_order_relaxed);
}

/* Copies an ACTIVE slot's arrays and releases its lease. */
static void break_slot(struct hog_hgb_lease *s)
{
    copy_out(s->p, s->len);
    fcntl(atomic_load_explicit(&s->fd, memory_order_relaxed), F_SETLEASE, F_UNLCK);
    /* release: the copy is done; pairs with the acquire in drop's wait. */
    atomic_store_explicit(&s->state, SLOT_COPIED, memory_order_release);
}

static void on_lease_break(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    if (si->si_code != POLL_MSG) /* not from a lease: kill(), sigqueue() */
        return;
    int saved = errno;
    int fd = si->si_fd;
    /* F_GETLEASE answers F_RDLCK only while no break is pending on fd: a
     * signal left over from an fd since closed and reused is ignored. */
    if (fcntl(fd, F_GETLEASE) != F_RDLCK) {
        for (int i = 0; i < HOG_HGB_LEASES; i++) {
            struct hog_hgb_lease *s = &registry.slot[i];
            for (;;) {
                /* acquire: pairs with the release that published p, len */
                int st = atomic_load_explicit(&s->state, memory_order_acquire);
                if ((st != SLOT_LOADING && st != SLOT_ACTIVE) ||
                    atomic_load_explicit(&s->fd, memory_order_relaxed) != fd)
                    break;
                int next = st == SLOT_LOADING ? SLOT_PENDING : SLOT_BREAKING;
                if (!atomic_compare_exchange_weak_explicit(
                        &s->state, &st, next, memory_order_acquire,
                        memory_order_relaxed))
                    continue; /* the loader published meanwhile: again */
                if (next == SLOT_BREAKING)
                    break_slot(s);
                break;
            }
        }
    }
    errno = saved;
}

static void install_handler(void)
{
    int sig = SIGRTMIN + LEASE_SIGNAL_OFFSET;
    struct sigaction old, sa;
    /* A signal the application already handles is left to it (and the
     * loads go without leases). */
    if (sig > SIGRTMAX || sigaction(sig, NULL, &old) != 0 ||
        (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_lease_break;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: an open() of the file by this very process, interrupted
     * by its own break, goes on once the lease is gone. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    registry.page = (size_t)sysconf(_SC_PAGESIZE);
    if (sigaction(sig, &sa, NULL) == 0)
        registry.signal = sig;
}

int hog_hgb_lease_signal(void)
{
    pthread_once(&registry.once, install_handler);
    return registry.signal;
}

/* Whether a lease on fd would keep every writer out. Not on a file
 * without links: a memfd (or a deleted file), whose descriptor from
 * memfd_create writes without counting as a writer, so the kernel would
 * grant the lease and that writer would never break it. Not on a file
 * system whose files change without an open() on this machine: FUSE (the
 * server), and the shared and network ones that grant leases locally
 * (NFS refuses them by itself). */
static bool lease_would_hold(int fd)
{
    static const unsigned long remote[] = {
        0x65735546, /* FUSE (virtiofs too) */
        0xFF534D42, 0xFE534D42, /* CIFS, SMB2 */
        0x00C36400, /* Ceph */
        0x01021997, /* 9p */
        0x01161970, 0x7461636F, /* GFS2, OCFS2 */
        0x0BD00BD0, 0x5346414F, /* Lustre, AFS */
    };
    struct stat sb;
    struct statfs fs;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_nlink == 0 ||
        fstatfs(fd, &fs) != 0)
        return false;
    for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++)
        if ((unsigned long)fs.f_type == remote[i])
            return false;
    return true;
}

struct hog_hgb_lease *hog_hgb_lease_take(int fd)
{
    int sig = hog_hgb_lease_signal();
    if (sig == 0 || !lease_would_hold(fd))
        return NULL;
    for (int i = 0; i < HOG_HGB_LEASES; i++) {
        struct hog_hgb_lease *s = &registry.slot[i];
        int want = SLOT_FREE;
        if (!atomic_compare_exchange_strong_explicit(&s->state, &want, SLOT_CLAIMED,
                                                     memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        atomic_store_explicit(&s->fd, fd, memory_order_relaxed);
        s->p = NULL, s->len = 0;
        /* LOADING before the lease exists: a break may come at once. */
        atomic_store_explicit(&s->state, SLOT_LOADING, memory_order_release);
        if (fcntl(fd, F_SETSIG, sig) == 0 && fcntl(fd, F_SETLEASE, F_RDLCK) == 0)
            return s;
        atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
        return NULL;
    }
    return NULL;
}

bool hog_hgb_lease_publish(struct hog_hgb_lease *s, void *p, size_t len,
                           bool *late)
{
    s->p = p, s->len = len;
    *late = false;
    int want = SLOT_LOADING;
    /* release: publishes p and len; pairs with the handler's acquire. */
    if (atomic_compare_exchange_strong_explicit(&s->state, &want, SLOT_ACTIVE,
                                                memory_order_release,
                                                memory_order_relaxed))
        return true;
    /* PENDING: a writer has been waiting since during the load. Releasing
     * fails when the kernel no longer held the lease for us, i.e. the
     * writer may have gone ahead before the copy. */
    copy_out(p, len);
    int fd = atomic_load_explicit(&s->fd, memory_order_relaxed);
    *late = fcntl(fd, F_SETLEASE, F_UNLCK) != 0;
    atomic_store_explicit(&s->state, SLOT_COPIED, memory_order_release);
    return false;
}

void hog_hgb_lease_drop(struct hog_hgb_lease *s)
{
    if (!s)
        return;
    for (;;) {
        /* acquire: pairs with break_slot's release (the copy is done). */
        int st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == SLOT_BREAKING) { /* the handler, in another thread */
            sched_yield();
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&s->state, &st, SLOT_CLOSING,
                                                  memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    /* Released explicitly: closing fd alone would not do it while a child
     * forked since holds the open file too. Fails harmlessly when the
     * lease was released already. */
    int fd = atomic_load_explicit(&s->fd, memory_order_relaxed);
    fcntl(fd, F_SETLEASE, F_UNLCK);
    close(fd);
    atomic_store_explicit(&s->fd, -1, memory_order_relaxed);
    atomic_store_explicit(&s->state, SLOT_FREE, memory_order_release);
}

void hog_hgb_lease_release(void *l)
{
    hog_hgb_lease_drop(l);
}

enum hog_hgb_lease_state hog_hgb_lease_state(const hog_data *d)
{
    if (d->release != hog_hgb_lease_release)
        return HOG_HGB_LEASE_NONE;
    const struct hog_hgb_lease *s = d->release_ctx;
    int st = atomic_load_explicit(&s->state, memory_order_acquire);
    return st == SLOT_ACTIVE || st == SLOT_BREAKING ? HOG_HGB_LEASE_HELD
                                                    : HOG_HGB_LEASE_COPIED;
}
