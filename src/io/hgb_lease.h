/*
 * Read leases on mapped .hgb files (hgb_lease.c), private to src/io/.
 *
 * The loader (hgb.c) maps the pages of a version 2 file's indices and
 * values only under a read lease: hog_hgb_lease_take before it reads a
 * byte of the file, hog_hgb_lease_publish once the arrays are loaded and
 * checked, and hog_data_free drops it (through hog_data.release). While
 * the lease is held, a writer's open() or truncate() of the file waits
 * until the arrays have been copied out of the file's pages.
 */
#ifndef HOG_IO_HGB_LEASE_H
#define HOG_IO_HGB_LEASE_H

#include "io/io.h"

struct hog_hgb_lease;

/* Takes a read lease on fd (open read-only, nothing read from it yet) and
 * hands fd over to it: closed by hog_hgb_lease_drop. NULL, and fd still
 * the caller's, when no lease can be had: the file is open for writing
 * somewhere (EAGAIN), not ours without CAP_LEASE (EACCES), a file system
 * without leases (EINVAL), leases disabled, the signal taken by the
 * application, HOG_HGB_LEASES files already leased, a file without
 * links (a memfd, whose own descriptor writes unseen by leases), or a
 * FUSE or shared file system (its files change without an open()). */
struct hog_hgb_lease *hog_hgb_lease_take(int fd);

/* The loaded arrays whose pages may come from the file: [p, p + len),
 * whole pages of this process's page size, inside one mapping that lives
 * until hog_hgb_lease_drop. From now on a lease break copies them.
 * Returns true when the lease is still held. False when a writer asked
 * for the file during the load: the arrays have now been copied and the
 * lease released; *late is then true when the kernel had already given
 * up waiting (fs.lease-break-time) before the copy, so the copy's
 * indices must be checked again. */
bool hog_hgb_lease_publish(struct hog_hgb_lease *l, void *p, size_t len,
                           bool *late);

/* Releases the lease (when still held), closes its fd and frees its slot.
 * The arrays are no longer looked after: call it before unmapping them.
 * Its void * form is what hog_data.release takes. */
void hog_hgb_lease_drop(struct hog_hgb_lease *l);
void hog_hgb_lease_release(void *l);

#endif
