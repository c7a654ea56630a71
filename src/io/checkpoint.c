/*
 * Training checkpoints: the file format. A checkpoint is untrusted input
 * like any other file: the reader checks the magic, refuses a newer version
 * by number, checks the header CRC, derives the exact file size from the
 * declared weight count before allocating anything, and checks the CRC of
 * the arrays. Written through hog_outfile_* (temporary name, fsync, rename,
 * fsync of the folder), so a kill or a full disk leaves the previous
 * checkpoint whole.
 *
 * Layout (little-endian), header of 256 bytes:
 *
 *     0  magic "HOGCKPT\0"     8  version u32       12 header size u32 (256)
 *     16 flags u32 (1 lazy weights or FTRL's z, 2 AdaGrad's sums or
 *        FTRL's sqrt(n), 4 stamp, 8 one-vs-rest)  20 algo u32
 *     24 loss u32              28 schedule u32      32 eta f64
 *     40 l1 f64                48 l2 f64            56 power f64
 *     64 bias f64              72 seed u64          80 rows u64
 *     88 nnz u64               96 n_features u64    104 data CRC u32
 *     112 n_weights u64        120 epoch u64        128 pos u64
 *     136 t_global u64         144 seg_t0 u64       152 seg_want u32
 *     156 seg_pos u32          160 rng state 4 x u64
 *     192 checkpoint rows u64  200 checkpoint epochs u32
 *     204 CRC32C of everything after the header
 *   version 2 (zero in version 1 files):
 *     208 batch size u64       216 hot degree u64   224 hot count u64
 *     232 sync every u64       240 repartition u8   241 Cyclades hot u8
 *     242 weighted u8 (1: row weights; zero in older files: none)
 *     243 softmax u8 (1: --multiclass softmax of K classes, n_weights =
 *         K x the model's vector length, class-major; zero in older files)
 *     244 CRC32C of the row weights u32 (weighted)
 *     248 replicas u32
 *     252 CRC32C of 0..251
 *
 * then n_weights float32 weights (current), and with their flags the lazy
 * weights (float32), the AdaGrad sums (float32) and the timestamps (u32);
 * an FTRL run (schedule FTRL) writes its sums z where the lazy weights go
 * and the roots sqrt(n) of its sums n where AdaGrad's go (flags 1 and 2,
 * no stamps).
 * Version 3, flag 8 (one-vs-rest of K classes; only such files are written
 * as version 3, the others as version 2): then K u32, the class in
 * progress c u32, and the c finished vectors (c x n_weights float32); the
 * arrays' CRC at 204 covers this part too.
 */
#include "io/io.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the checkpoint writer and reader assume a little-endian host");

#define CK_HDR 256u
/* The arrays present. Bits 1 and 2 each stand for one array whose meaning
 * is the trainer's (struct hog_train_state's unions): FTRL keeps z and
 * sqrt(n) in the pointers, the places and the bits of the lazy weights and
 * AdaGrad's sums, so this file reads them under the SGD names. */
enum { F_W_LAZY = 1, F_ADAGRAD_G2 = 2, F_STAMP = 4, F_OVR = 8 };

static void p32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void p64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static void pf64(unsigned char *p, double v) { memcpy(p, &v, 8); }
static uint32_t g32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t g64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static double gf64(const unsigned char *p)
{
    double v;
    memcpy(&v, p, 8);
    return v;
}

uint32_t hog_ckpt_data_crc(const hog_data *d)
{
    const struct hog_csr *m = &d->m;
    uint64_t base = m->off[0];
    uint32_t c = 0;
    for (uint64_t i = 0; i <= m->rows; i++) { /* offsets relative to row 0 */
        uint64_t o = m->off[i] - base;
        c = hog_crc32c(c, &o, sizeof o);
    }
    c = hog_crc32c(c, m->y, m->rows * sizeof *m->y);
    c = hog_crc32c(c, m->idx + base, m->nnz * sizeof *m->idx);
    return hog_crc32c(c, m->val + base, m->nnz * sizeof *m->val);
}

uint32_t hog_ckpt_weights_crc(const hog_data *d)
{
    return d->row_w ? hog_crc32c(0, d->row_w, d->m.rows * sizeof *d->row_w)
                    : 0;
}

/* The arrays present, in file order (the save writes them, the load
 * reads into them). */
static unsigned arrays_of(const struct hog_train_state *s, void *a[4])
{
    unsigned k = 0;
    a[k++] = s->w;
    if (s->w_lazy)
        a[k++] = s->w_lazy;
    if (s->adagrad_g2)
        a[k++] = s->adagrad_g2;
    if (s->stamp)
        a[k++] = s->stamp;
    return k;
}

hog_status hog_ckpt_save(const struct hog_ckpt *c, const char *path,
                         hog_err *err)
{
    const struct hog_train_state *s = &c->st;
    void *arr[4];
    unsigned na = arrays_of(s, arr);
    size_t bytes = s->n_weights * 4;
    uint32_t acrc = 0;
    for (unsigned k = 0; k < na; k++)
        acrc = hog_crc32c(acrc, arr[k], bytes);
    const bool ovr = s->n_classes != 0;
    unsigned char kc[8];
    size_t done_bytes = ovr ? (size_t)s->ovr_class * bytes : 0;
    if (ovr) {
        p32(kc, s->n_classes);
        p32(kc + 4, s->ovr_class);
        acrc = hog_crc32c(acrc, kc, sizeof kc);
        acrc = hog_crc32c(acrc, s->ovr_done, done_bytes);
    }

    unsigned char h[CK_HDR];
    memset(h, 0, sizeof h);
    memcpy(h, HOG_CKPT_MAGIC, 8);
    p32(h + 8, ovr ? HOG_CKPT_VERSION : 2u);
    p32(h + 12, CK_HDR);
    p32(h + 16, (s->w_lazy ? F_W_LAZY : 0) |
                    (s->adagrad_g2 ? F_ADAGRAD_G2 : 0) |
                    (s->stamp ? F_STAMP : 0) | (ovr ? F_OVR : 0));
    p32(h + 20, c->algo);
    p32(h + 24, c->loss);
    p32(h + 28, c->schedule);
    pf64(h + 32, c->eta);
    pf64(h + 40, c->l1);
    pf64(h + 48, c->l2);
    pf64(h + 56, c->power);
    pf64(h + 64, c->bias);
    p64(h + 72, c->seed);
    p64(h + 80, c->rows);
    p64(h + 88, c->nnz);
    p64(h + 96, c->n_features);
    p32(h + 104, c->data_crc);
    p64(h + 112, s->n_weights);
    p64(h + 120, s->epoch);
    p64(h + 128, s->pos);
    p64(h + 136, s->t_global);
    p64(h + 144, s->seg_t0);
    p32(h + 152, s->seg_want);
    p32(h + 156, s->seg_pos);
    for (int k = 0; k < 4; k++)
        p64(h + 160 + 8 * k, s->rng.s[k]);
    p64(h + 192, c->ckpt_rows);
    p32(h + 200, c->ckpt_epochs);
    p32(h + 204, acrc);
    p64(h + 208, c->batch_size);
    p64(h + 216, c->hot_degree);
    p64(h + 224, c->hot_count);
    p64(h + 232, c->sync_every);
    h[240] = (unsigned char)(c->repartition != 0);
    h[241] = (unsigned char)(c->cyc_hot != 0);
    h[242] = (unsigned char)(c->weighted != 0);
    h[243] = (unsigned char)(c->softmax != 0);
    p32(h + 244, c->weighted ? c->weights_crc : 0);
    p32(h + 248, c->replicas);
    p32(h + 252, hog_crc32c(0, h, 252));

    hog_outfile o;
    hog_status st = hog_outfile_open(&o, path, err);
    if (st != HOG_OK)
        return st;
    FILE *f = o.f;
    bool ok = fwrite(h, 1, CK_HDR, f) == CK_HDR;
    for (unsigned k = 0; ok && k < na; k++)
        ok = fwrite(arr[k], 1, bytes, f) == bytes;
    if (ok && ovr)
        ok = fwrite(kc, 1, sizeof kc, f) == sizeof kc &&
             fwrite(s->ovr_done, 1, done_bytes, f) == done_bytes;
    if (!ok) {
        int e = errno;
        hog_outfile_abort(&o);
        return hog_errf(err, HOG_EIO, "%s: write failed: %s (nothing written)",
                        path, strerror(e ? e : EIO));
    }
    return hog_outfile_commit(&o, err);
}

void hog_ckpt_free(struct hog_ckpt *c)
{
    free(c->st.w);
    free(c->st.w_lazy);
    free(c->st.adagrad_g2);
    free(c->st.stamp);
    free(c->st.ovr_done);
    c->st.w = c->st.w_lazy = c->st.adagrad_g2 = c->st.ovr_done = NULL;
    c->st.stamp = NULL;
}

static hog_status load_body(FILE *f, const char *path, uint64_t fsize,
                            struct hog_ckpt *c, hog_err *err)
{
    unsigned char h[CK_HDR];
    size_t got = fread(h, 1, CK_HDR, f);
    if (got < 8 || memcmp(h, HOG_CKPT_MAGIC, 8) != 0)
        return hog_errf(err, HOG_EFORMAT,
                        "%s: not a hogtrain checkpoint (bad magic)", path);
    if (got < 12)
        return hog_errf(err, HOG_ECORRUPT, "%s: truncated checkpoint header "
                        "(%llu bytes)", path, (unsigned long long)fsize);
    uint32_t ver = g32(h + 8);
    if (ver > HOG_CKPT_VERSION)
        return hog_errf(err, HOG_EFORMAT,
                        "%s: checkpoint format version %u is newer than this "
                        "hogtrain reads (%u)", path, ver, HOG_CKPT_VERSION);
    if (got < CK_HDR)
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: truncated checkpoint header (%llu bytes of %u)",
                        path, (unsigned long long)fsize, CK_HDR);
    if (hog_crc32c(0, h, 252) != g32(h + 252))
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: checkpoint header checksum mismatch", path);
    uint32_t flags = g32(h + 16);
    if (ver == 0 || g32(h + 12) != CK_HDR || (flags & ~15u) ||
        ((flags & F_OVR) && ver < 3))
        return hog_errf(err, HOG_EFORMAT,
                        "%s: checkpoint version %u with header size %u and "
                        "flags %#x is not readable", path, ver, g32(h + 12),
                        flags);
    unsigned na = 1 + !!(flags & F_W_LAZY) + !!(flags & F_ADAGRAD_G2) +
                  !!(flags & F_STAMP);
    uint64_t nw = g64(h + 112);
    /* one-vs-rest: the class count, the class and its finished vectors
     * follow the arrays (8 bytes, then checked below) */
    uint64_t tail = (flags & F_OVR) ? 8 : 0;
    /* sizes before allocation: the file must be exactly header + arrays
     * (+ the one-vs-rest part, checked once its class is read) */
    if (nw == 0 || nw > (fsize - CK_HDR) / 4 / na ||
        (tail ? fsize < CK_HDR + nw * 4 * na + tail
              : fsize != CK_HDR + nw * 4 * na))
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: checkpoint of %llu weights in %u arrays needs "
                        "%llu bytes but the file has %llu (truncated or "
                        "corrupt)", path, (unsigned long long)nw, na,
                        (unsigned long long)(nw <= UINT64_MAX / 16
                                                 ? CK_HDR + nw * 4 * na
                                                 : UINT64_MAX),
                        (unsigned long long)fsize);

    memset(c, 0, sizeof *c);
    c->algo = g32(h + 20);
    c->loss = g32(h + 24);
    c->schedule = g32(h + 28);
    c->eta = gf64(h + 32);
    c->l1 = gf64(h + 40);
    c->l2 = gf64(h + 48);
    c->power = gf64(h + 56);
    c->bias = gf64(h + 64);
    c->seed = g64(h + 72);
    c->rows = g64(h + 80);
    c->nnz = g64(h + 88);
    c->n_features = g64(h + 96);
    c->data_crc = g32(h + 104);
    struct hog_train_state *s = &c->st;
    s->n_weights = nw;
    s->epoch = g64(h + 120);
    s->pos = g64(h + 128);
    s->t_global = g64(h + 136);
    s->seg_t0 = g64(h + 144);
    s->seg_want = g32(h + 152);
    s->seg_pos = g32(h + 156);
    for (int k = 0; k < 4; k++)
        s->rng.s[k] = g64(h + 160 + 8 * k);
    c->ckpt_rows = g64(h + 192);
    c->ckpt_epochs = g32(h + 200);
    c->opts_known = ver >= 2;
    if (c->opts_known) {
        c->batch_size = g64(h + 208);
        c->hot_degree = g64(h + 216);
        c->hot_count = g64(h + 224);
        c->sync_every = g64(h + 232);
        c->repartition = h[240];
        c->cyc_hot = h[241];
        c->weighted = h[242] != 0;
        c->softmax = h[243] != 0;
        c->weights_crc = g32(h + 244);
        c->replicas = g32(h + 248);
    }

    size_t bytes = nw * 4;
    bool ok = (s->w = malloc(bytes)) != NULL;
    if (ok && (flags & F_W_LAZY))
        ok = (s->w_lazy = malloc(bytes)) != NULL;
    if (ok && (flags & F_ADAGRAD_G2))
        ok = (s->adagrad_g2 = malloc(bytes)) != NULL;
    if (ok && (flags & F_STAMP))
        ok = (s->stamp = malloc(bytes)) != NULL;
    if (!ok) {
        hog_ckpt_free(c);
        return hog_errf(err, HOG_ENOMEM,
                        "%s: out of memory for a checkpoint of %llu weights",
                        path, (unsigned long long)nw);
    }
    void *arr[4];
    unsigned k = arrays_of(s, arr);
    uint32_t acrc = 0;
    for (unsigned i = 0; i < k; i++) {
        if (fread(arr[i], 1, bytes, f) != bytes) {
            hog_ckpt_free(c);
            return hog_errf(err, HOG_ECORRUPT,
                            "%s: checkpoint truncated while reading", path);
        }
        acrc = hog_crc32c(acrc, arr[i], bytes);
    }
    if (tail) {
        unsigned char kc[8];
        hog_status ts = HOG_OK;
        if (fread(kc, 1, sizeof kc, f) != sizeof kc)
            ts = hog_errf(err, HOG_ECORRUPT,
                          "%s: checkpoint truncated while reading", path);
        uint64_t left = fsize - CK_HDR - nw * 4 * na - tail;
        if (ts == HOG_OK) {
            s->n_classes = g32(kc);
            s->ovr_class = g32(kc + 4);
            if (s->n_classes < 3 || s->n_classes > HOG_MAX_CLASSES ||
                s->ovr_class >= s->n_classes ||
                left != (uint64_t)s->ovr_class * bytes)
                ts = hog_errf(err, HOG_ECORRUPT,
                              "%s: bad checkpoint: class %u of %u with %llu "
                              "bytes of finished classes", path,
                              s->ovr_class, s->n_classes,
                              (unsigned long long)left);
        }
        if (ts == HOG_OK && left &&
            !(s->ovr_done = malloc(left)))
            ts = hog_errf(err, HOG_ENOMEM, "%s: out of memory for %u "
                          "finished classes", path, s->ovr_class);
        if (ts == HOG_OK && left && fread(s->ovr_done, 1, left, f) != left)
            ts = hog_errf(err, HOG_ECORRUPT,
                          "%s: checkpoint truncated while reading", path);
        if (ts != HOG_OK) {
            hog_ckpt_free(c);
            return ts;
        }
        acrc = hog_crc32c(acrc, kc, sizeof kc);
        acrc = hog_crc32c(acrc, s->ovr_done, left);
    }
    if (acrc != g32(h + 204)) {
        hog_ckpt_free(c);
        return hog_errf(err, HOG_ECORRUPT,
                        "%s: checkpoint data checksum mismatch (corrupt)",
                        path);
    }
    /* a CRC passed: what remains are values a buggy writer could produce */
    const char *bad = NULL;
    for (uint64_t j = 0; j < nw && !bad; j++)
        if (!isfinite(s->w[j]) ||
            (s->w_lazy && !isfinite(s->w_lazy[j])) ||
            (s->adagrad_g2 && !(s->adagrad_g2[j] >= 0 && /* or sqrt(n) */
                                isfinite(s->adagrad_g2[j]))))
            bad = "a weight or accumulator is not a finite number";
    if (!bad && (s->epoch == 0 || s->pos > c->rows ||
                 s->seg_pos > s->pos))
        bad = "its position is out of range";
    if (bad) {
        hog_ckpt_free(c);
        return hog_errf(err, HOG_ECORRUPT, "%s: bad checkpoint: %s", path,
                        bad);
    }
    return HOG_OK;
}

hog_status hog_ckpt_load(const char *path, struct hog_ckpt *c, hog_err *err)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f)
        return hog_errf(err, HOG_EIO, "%s: cannot open checkpoint: %s", path,
                        strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return hog_errf(err, HOG_EIO, "%s: not a regular file", path);
    }
    hog_status st = load_body(f, path, (uint64_t)sb.st_size, c, err);
    fclose(f);
    return st;
}
