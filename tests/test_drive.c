/* The SGD epoch driver (src/core/drive.c) with a recording step: where
 * it cuts an epoch into pieces, blocks and checkpoints, and where a
 * resumed run continues. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/drive.h"

#define MAX_EVENTS 4096

struct rec {
    struct hog_order ord;
    uint64_t rows[10000];
    struct hog_drive_span span[MAX_EVENTS];
    unsigned nspan;
    uint64_t block_ends, epoch_ends;
    uint64_t saved_t[64]; /* t_global of each save */
    unsigned nsaved;
    uint64_t open_from; /* what the resume op answers */
};

static struct hog_order *rec_order(void *ctx, unsigned p)
{
    (void)p;
    return &((struct rec *)ctx)->ord;
}

static hog_status rec_run(void *ctx, unsigned tid, unsigned T,
                          const struct hog_drive_span *sp, hog_err *err)
{
    (void)tid, (void)T, (void)err;
    struct rec *r = ctx;
    cr_assert_lt(r->nspan, MAX_EVENTS);
    r->span[r->nspan++] = *sp;
    return HOG_OK;
}

static void rec_block_end(void *ctx, unsigned tid, unsigned T)
{
    (void)tid, (void)T;
    ((struct rec *)ctx)->block_ends++;
}

static hog_status rec_save(void *ctx, struct hog_train_state *at, bool cut,
                           hog_err *err)
{
    (void)cut, (void)err;
    struct rec *r = ctx;
    cr_assert_lt(r->nsaved, 64);
    r->saved_t[r->nsaved++] = at->t_global;
    return HOG_OK;
}

static hog_status rec_resume(void *ctx, const struct hog_train_state *st,
                             uint64_t *open_from, hog_err *err)
{
    (void)st, (void)err;
    *open_from = ((struct rec *)ctx)->open_from;
    return HOG_OK;
}

static hog_status rec_epoch_end(struct hog_fit *f, unsigned epoch,
                                double seconds, hog_err *err)
{
    (void)epoch, (void)seconds, (void)err;
    struct rec *r = f->ctx;
    r->epoch_ends++;
    return HOG_OK;
}

static void rec_tick(struct hog_fit *f, unsigned epoch, uint64_t done,
                     uint64_t total)
{
    (void)f, (void)epoch, (void)done, (void)total;
}

static const struct hog_drive_ops rec_ops = {
    .order = rec_order,
    .run = rec_run,
    .block_end = rec_block_end,
    .save = rec_save,
    .resume = rec_resume,
};

/* n rows, `blocks` blocks, epochs, a row checkpoint every `every` steps;
 * resume: NULL or the state to continue from. */
static void drive(struct rec *r, uint64_t n, uint64_t blocks,
                  unsigned epochs, uint64_t every,
                  const struct hog_train_state *resume)
{
    static hog_train_opts o;
    static struct hog_fit f;
    memset(&o, 0, sizeof o);
    memset(&f, 0, sizeof f);
    o.epochs = epochs;
    o.seed = 7;
    f.o = &o;
    f.ctx = r;
    f.epoch_end = rec_epoch_end;
    f.tick = rec_tick;
    f.ckpt_rows = every;
    f.resume = resume;
    r->ord.rows = r->rows;
    r->ord.n = n;
    for (uint64_t i = 0; i < n; i++)
        r->rows[i] = i;
    hog_rng_seed(&r->ord.rng, o.seed, 0);
    struct hog_drive dv = { .f = &f, .ops = &rec_ops, .ctx = r, .n = n,
                            .blocks = blocks, .n_orders = 1, .rows = true };
    hog_err err;
    cr_assert_eq(hog_drive_begin(&dv, &err), HOG_OK);
    hog_drive_job(&dv, 0, 1);
    cr_assert_eq(dv.st, HOG_OK);
}

Test(drive, rows_pieces_end_on_blocks_and_row_checkpoints)
{
    static struct rec r;
    memset(&r, 0, sizeof r);
    const uint64_t n = 10000, every = 3001;
    drive(&r, n, 3, 2, every, NULL);
    uint64_t next = 0, stops[] = { 3333, 6666, 10000 };
    for (unsigned k = 0; k < r.nspan; k++) {
        const struct hog_drive_span *sp = &r.span[k];
        uint64_t t0 = (sp->epoch - 1) * n + sp->from;
        uint64_t t1 = (sp->epoch - 1) * n + sp->to;
        cr_assert_eq(sp->from, next % n, "piece %u starts where the last "
                     "ended", k);
        cr_assert_leq(sp->to - sp->from, HOG_SGD_BLOCK);
        cr_assert_eq(sp->stop, stops[sp->block]);
        cr_assert_leq(sp->to, sp->stop, "a piece stays inside its block");
        cr_assert(sp->block == 0 || sp->from >= stops[sp->block - 1]);
        cr_assert_eq(t0 / every, (t1 - 1) / every,
                     "a piece never crosses a row checkpoint");
        next = t1;
    }
    cr_assert_eq(next, 2 * n);
    cr_assert_eq(r.block_ends, 6);
    cr_assert_eq(r.epoch_ends, 2);
    cr_assert_eq(r.nsaved, 2 * n / every);
    for (unsigned k = 0; k < r.nsaved; k++)
        cr_assert_eq(r.saved_t[k], (k + 1) * every);
}

Test(drive, resume_mid_epoch_continues_at_the_row_and_skips_done_blocks)
{
    static struct rec full, part;
    memset(&full, 0, sizeof full);
    memset(&part, 0, sizeof part);
    const uint64_t n = 10000;
    drive(&full, n, 3, 3, 0, NULL);
    /* a checkpoint at row 7000 of epoch 2 whose open state began at 6800
     * (inside the last block: the first two are done) */
    struct hog_train_state at;
    memset(&at, 0, sizeof at);
    at.epoch = 2;
    at.pos = 7000;
    at.t_global = n + 7000;
    part.open_from = 6800;
    drive(&part, n, 3, 3, 0, &at);
    const struct hog_drive_span *sp = &part.span[0];
    cr_assert_eq(sp->epoch, 2);
    cr_assert_eq(sp->block, 2);
    cr_assert_eq(sp->from, 7000);
    cr_assert_eq(part.epoch_ends, 2);
    cr_assert_eq(part.block_ends, 1 + 3);
    /* the same rows after the resume point as the uninterrupted run: the
     * replayed shuffles leave the order where the full run had it */
    cr_assert_eq(memcmp(part.rows, full.rows, sizeof full.rows), 0);
    cr_assert_eq(memcmp(&part.ord.rng, &full.ord.rng, sizeof full.ord.rng),
                 0);
    /* after a completed epoch the next starts from its first row */
    static struct rec after;
    memset(&after, 0, sizeof after);
    at.pos = n;
    at.t_global = 2 * n;
    after.open_from = n;
    drive(&after, n, 3, 3, 0, &at);
    cr_assert_eq(after.span[0].epoch, 3);
    cr_assert_eq(after.span[0].from, 0);
    cr_assert_eq(after.epoch_ends, 1);
    cr_assert_eq(memcmp(after.rows, full.rows, sizeof full.rows), 0);
}

/* ---- a step with a drawn order (the streamed trainers') -------------------- */

struct drawn {
    char log[256]; /* 'd' draw ('D' resumed), 'b' begin, 'r' run,
                      'e' epoch_end, 's' save */
    unsigned len;
    unsigned due_epoch; /* due() answers true after this epoch */
    unsigned fail_draw, fail_run; /* the epoch whose draw/run fails */
    unsigned epoch;
};

static void drawn_log(struct drawn *d, char c)
{
    cr_assert_lt(d->len, sizeof d->log - 1);
    d->log[d->len++] = c;
}

static hog_status drawn_draw(void *ctx, unsigned epoch, bool resumed,
                             hog_err *err)
{
    struct drawn *d = ctx;
    drawn_log(d, resumed ? 'D' : 'd');
    d->epoch = epoch;
    if (epoch == d->fail_draw)
        return hog_errf(err, HOG_EIO, "draw %u failed", epoch);
    return HOG_OK;
}

static void drawn_begin(void *ctx, unsigned tid, unsigned T, unsigned epoch)
{
    (void)tid, (void)T;
    struct drawn *d = ctx;
    cr_assert_eq(epoch, d->epoch, "begin after the epoch's draw");
    drawn_log(d, 'b');
}

static hog_status drawn_run(void *ctx, unsigned tid, unsigned T,
                            const struct hog_drive_span *sp, hog_err *err)
{
    (void)tid, (void)T;
    struct drawn *d = ctx;
    drawn_log(d, 'r');
    if (sp->epoch == d->fail_run)
        return hog_errf(err, HOG_EIO, "run %u failed", sp->epoch);
    return HOG_OK;
}

static hog_status drawn_epoch_end(struct hog_fit *f, unsigned epoch,
                                  double seconds, hog_err *err)
{
    (void)epoch, (void)seconds, (void)err;
    drawn_log(f->ctx, 'e');
    return HOG_OK;
}

static hog_status drawn_save(void *ctx, struct hog_train_state *at,
                             bool cut, hog_err *err)
{
    (void)at, (void)cut, (void)err;
    drawn_log(ctx, 's');
    return HOG_OK;
}

static bool drawn_due(void *ctx)
{
    struct drawn *d = ctx;
    return d->epoch == d->due_epoch;
}

static const struct hog_drive_ops drawn_ops = {
    .draw = drawn_draw,
    .begin = drawn_begin,
    .run = drawn_run,
    .save = drawn_save,
    .due = drawn_due,
};

/* Three epochs of 5000 rows in one block; the step a rows or a block
 * step, resumed from r (or not: NULL). Returns the drive's status, the
 * message in *err. */
static hog_status drive_from(struct drawn *d, bool rows,
                             const struct hog_train_state *r, hog_err *err)
{
    static hog_train_opts o;
    static struct hog_fit f;
    memset(&o, 0, sizeof o);
    memset(&f, 0, sizeof f);
    o.epochs = 3;
    f.o = &o;
    f.ctx = d;
    f.epoch_end = drawn_epoch_end;
    f.tick = rec_tick;
    f.resume = r;
    struct hog_drive dv = { .f = &f, .ops = &drawn_ops, .ctx = d,
                            .n = 5000, .rows = rows };
    cr_assert_eq(hog_drive_begin(&dv, err), HOG_OK);
    hog_drive_job(&dv, 0, 1);
    return dv.st;
}

static hog_status drive_drawn(struct drawn *d, bool rows, hog_err *err)
{
    return drive_from(d, rows, NULL, err);
}

Test(drive, a_drawn_order_comes_first_and_a_failure_ends_the_drive)
{
    static struct drawn d;
    hog_err err;
    memset(&d, 0, sizeof d);
    cr_assert_eq(drive_drawn(&d, false, &err), HOG_OK);
    cr_assert_str_eq(d.log, "dbredbredbre");
    /* rows: two pieces (HOG_SGD_BLOCK) an epoch */
    memset(&d, 0, sizeof d);
    cr_assert_eq(drive_drawn(&d, true, &err), HOG_OK);
    cr_assert_str_eq(d.log, "dbrredbrredbrre");
    /* a draw that fails: nothing of its epoch runs */
    memset(&d, 0, sizeof d);
    d.fail_draw = 2;
    cr_assert_eq(drive_drawn(&d, false, &err), HOG_EIO);
    cr_assert_str_eq(err.msg, "draw 2 failed");
    cr_assert_str_eq(d.log, "dbredb");
    /* a run that fails, either kind of step: no epoch_end, no more rows */
    for (int rows = 0; rows < 2; rows++) {
        memset(&d, 0, sizeof d);
        d.fail_run = 1;
        cr_assert_eq(drive_drawn(&d, rows, &err), HOG_EIO);
        cr_assert_str_eq(err.msg, "run 1 failed");
        cr_assert_str_eq(d.log, "dbr");
    }
}

/* Where a resumed drawing step starts: the state before epoch 1 draws
 * epoch 1 afresh; one at row 0 inside an open segment (Cyclades' before
 * its first batch) has drawn it; one inside epoch 2 goes on with its
 * order. due() adds a checkpoint at an epoch's end. */
Test(drive, a_resumed_draw_knows_its_epoch_is_drawn_and_due_saves)
{
    static struct drawn d;
    hog_err err;
    struct hog_train_state at;
    memset(&at, 0, sizeof at);
    at.epoch = 1; /* the start (a block step's cut in epoch 1) */
    memset(&d, 0, sizeof d);
    cr_assert_eq(drive_from(&d, false, &at, &err), HOG_OK);
    cr_assert_str_eq(d.log, "dbredbredbre");
    at.seg_want = 5000; /* row 0, its segment open: the order is drawn */
    memset(&d, 0, sizeof d);
    cr_assert_eq(drive_from(&d, false, &at, &err), HOG_OK);
    cr_assert_str_eq(d.log, "Dbredbredbre");
    at.epoch = 2;
    at.pos = 2500;
    at.t_global = 7500;
    memset(&d, 0, sizeof d);
    d.due_epoch = 2;
    cr_assert_eq(drive_from(&d, false, &at, &err), HOG_OK);
    cr_assert_str_eq(d.log, "Dbresdbre");
}
