/*
 * The CUDA backend's trainer (cuda.h): the replicas' device state, made
 * and freed. Resident or streamed is decided here, per device, from the
 * memory free; peer access between GPUs, or host staging where they
 * cannot reach each other, for the average.
 *
 * Each GPU operation is a static __global__ kernel (kernels.cu), a
 * launcher taking the stream, and an entry point taking the replica
 * (step.cu, average.cu). Every CUDA and cuSPARSE call is checked; a
 * failure becomes a hog_status and a sentence naming the call, the GPU
 * and CUDA's reason (device.cu). The maths is in train.c and gpu.h.
 *
 * Memory per replica: the weights w, and for the minibatch step a dense
 * gradient (zero between steps), the batch's margins and derivatives, its
 * compact gradient and cuSPARSE's work buffer; replica 0 also holds R - 1
 * gather slots for the average. The shard is resident (uploaded once with
 * async copies from page-locked memory) or, when it does not fit, streamed
 * batch by batch through two device slots on a copy stream, so that batch
 * k + 1's upload overlaps batch k's step.
 */
#include "gpu/internal.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" bool hog_cuda_streaming(const hog_cuda_trainer *t)
{
    return t && t->streaming;
}

hog_status dev_alloc(void **p, size_t bytes, const struct replica *r,
                     const char *what, hog_err *err)
{
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 4);
    if (e == cudaSuccess)
        return HOG_OK;
    (void)cudaGetLastError();
    if (e != cudaErrorMemoryAllocation)
        return cuda_check(e, "cudaMalloc", __FILE__, __LINE__, err);
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    (void)cudaGetLastError();
    char a[32], b[32], c[32];
    return hog_errf(err, HOG_ENOMEM,
                    "out of memory on GPU %d: %s for %s, with %s free of %s; "
                    "use a smaller --gpu-batch, or more GPUs (shards that do "
                    "not fit are streamed, but the weights and one batch "
                    "must fit)",
                    r->dev, mib(a, sizeof a, (double)bytes), what,
                    mib(b, sizeof b, (double)fr), mib(c, sizeof c, (double)tot));
}

/* Device bytes of a batch layout: rows, nnz, uniq, and how many batches. */
static uint64_t layout_bytes(uint64_t rows, uint64_t offs, uint64_t nnz,
                             uint64_t uniq, uint64_t toffs, bool transpose)
{
    uint64_t b = rows * 4 + offs * 4 + nnz * 8;
    if (transpose)
        b += uniq * 4 + toffs * 4 + nnz * 8;
    return b;
}

static hog_status alloc_layout(struct dbatch *a, uint64_t rows, uint64_t offs,
                               uint64_t nnz, uint64_t uniq, uint64_t toffs,
                               bool transpose, const struct replica *r,
                               hog_err *err)
{
    hog_status st = HOG_OK;
    DALLOC(a->y, rows, "the labels");
    DALLOC(a->roff, offs, "the row offsets");
    DALLOC(a->col, nnz, "the column indices");
    DALLOC(a->val, nnz, "the values");
    if (transpose) {
        DALLOC(a->tcol, uniq, "the transposes' columns");
        DALLOC(a->toff, toffs, "the transposes' offsets");
        DALLOC(a->trow, nnz, "the transposes' rows");
        DALLOC(a->tval, nnz, "the transposes' values");
    }
out:
    return st;
}

static void free_layout(struct dbatch *a)
{
    cudaFree(a->y);
    cudaFree(a->roff);
    cudaFree(a->col);
    cudaFree(a->val);
    cudaFree(a->tcol);
    cudaFree(a->toff);
    cudaFree(a->trow);
    cudaFree(a->tval);
    memset(a, 0, sizeof *a);
}

/* Queues a whole shard's upload, in pieces of at most 64 MiB (so that the
 * copy engine interleaves with other streams). */
static hog_status upload(void *dst, const void *src, size_t bytes,
                         cudaStream_t s, hog_err *err)
{
    const size_t piece = (size_t)64 << 20;
    for (size_t at = 0; at < bytes; at += piece) {
        size_t n = bytes - at < piece ? bytes - at : piece;
        CR(cudaMemcpyAsync((char *)dst + at, (const char *)src + at, n,
                           cudaMemcpyHostToDevice, s));
    }
    return HOG_OK;
}

static hog_status upload_shard(struct replica *r, bool transpose, hog_err *err)
{
    const struct hog_cuda_shard *sh = r->sh;
    hog_status st;
    if ((st = upload(r->whole.y, sh->y, sh->n_y * 4, r->copy, err)) ||
        (st = upload(r->whole.roff, sh->roff, sh->n_roff * 4, r->copy, err)) ||
        (st = upload(r->whole.col, sh->col, sh->n_nnz * 4, r->copy, err)) ||
        (st = upload(r->whole.val, sh->val, sh->n_nnz * 4, r->copy, err)))
        return st;
    if (transpose &&
        ((st = upload(r->whole.tcol, sh->tcol, sh->n_tcol * 4, r->copy, err)) ||
         (st = upload(r->whole.toff, sh->toff, sh->n_toff * 4, r->copy, err)) ||
         (st = upload(r->whole.trow, sh->trow, sh->n_nnz * 4, r->copy, err)) ||
         (st = upload(r->whole.tval, sh->tval, sh->n_nnz * 4, r->copy, err))))
        return st;
    /* The first step waits for the upload. */
    CR(cudaEventRecord(r->done, r->copy));
    CR(cudaStreamWaitEvent(r->s, r->done, 0));
    return HOG_OK;
}

static void replica_free(struct replica *r)
{
    if (r->dev < 0)
        return;
    cudaSetDevice(r->dev);
    if (r->s)
        cudaStreamSynchronize(r->s);
    if (r->copy)
        cudaStreamSynchronize(r->copy);
    (void)cudaGetLastError();
    free_layout(&r->whole);
    for (int i = 0; i < 2; i++) {
        free_layout(&r->slot[i].a);
        if (r->slot[i].ready)
            cudaEventDestroy(r->slot[i].ready);
        if (r->slot[i].free_)
            cudaEventDestroy(r->slot[i].free_);
    }
    cudaFree(r->w);
    cudaFree(r->gdense);
    cudaFree(r->g2);
    cudaFree(r->dv);
    cudaFree(r->coef);
    cudaFree(r->cnt);
    cudaFree(r->gather);
    if (r->stage)
        cudaFreeHost(r->stage);
    if (r->done)
        cudaEventDestroy(r->done);
    if (r->s)
        cudaStreamDestroy(r->s);
    if (r->copy)
        cudaStreamDestroy(r->copy);
    (void)cudaGetLastError();
    r->dev = -1;
}

extern "C" void hog_cuda_trainer_destroy(hog_cuda_trainer *t)
{
    if (!t)
        return;
    for (unsigned q = 0; q < t->R; q++)
        replica_free(&t->r[q]);
    free(t);
}

/* The bytes replicas on device dev need: resident (the shards and work
 * buffers) and streamed (work buffers and two batch slots). */
static void device_need(const hog_cuda_trainer *t,
                        const struct hog_cuda_shard *shards, int dev,
                        uint64_t *resident, uint64_t *streamed)
{
    const bool mb = t->p.step == HOG_GPU_STEP_MINIBATCH;
    const uint64_t nw = t->p.n_weights;
    *resident = *streamed = 0;
    for (unsigned q = 0; q < t->R; q++) {
        const struct hog_cuda_shard *sh = &shards[q];
        if (sh->dev != dev)
            continue;
        uint64_t work = nw * 4;
        if (mb)
            work += nw * 8 + (uint64_t)sh->max_rows * 8;
        else
            work += nw * 4 + (uint64_t)sh->max_rows * 4;
        if (t->p.schedule == HOG_SCHED_ADAGRAD)
            work += nw * 4;
        if (q == 0)
            work += (uint64_t)(t->R - 1) * nw * 4;
        *resident += work + layout_bytes(sh->n_y, sh->n_roff, sh->n_nnz,
                                         sh->n_tcol, sh->n_toff, mb);
        *streamed += work + 2 * layout_bytes(sh->max_rows, sh->max_rows + 1,
                                             sh->max_nnz, sh->max_uniq,
                                             sh->max_uniq + 1, mb);
    }
}

static hog_status replica_init(hog_cuda_trainer *t, unsigned q,
                               const struct hog_cuda_shard *sh, hog_err *err)
{
    struct replica *r = &t->r[q];
    const bool mb = t->p.step == HOG_GPU_STEP_MINIBATCH;
    const uint64_t nw = t->p.n_weights;
    hog_status st = HOG_OK;
    r->dev = sh->dev;
    r->sh = sh;
    CK(cudaSetDevice(r->dev));
    CK(cudaStreamCreateWithFlags(&r->s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&r->copy, cudaStreamNonBlocking));
    reset_at_exit_arm();
    CK(cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming));
    DALLOC(r->w, nw, "the weights");
    CK(cudaMemsetAsync(r->w, 0, nw * 4, r->s));
    if (mb) {
        DALLOC(r->gdense, nw, "the dense gradient");
        CK(cudaMemsetAsync(r->gdense, 0, nw * 8, r->s));
        DALLOC(r->dv, sh->max_rows, "the loss derivatives");
    } else {
        DALLOC(r->cnt, nw, "the rows per feature");
        CK(cudaMemsetAsync(r->cnt, 0, nw * 4, r->s));
        DALLOC(r->coef, sh->max_rows, "the rows' coefficients");
    }
    if (t->p.schedule == HOG_SCHED_ADAGRAD) {
        DALLOC(r->g2, nw, "the AdaGrad sums");
        CK(cudaMemsetAsync(r->g2, 0, nw * 4, r->s));
    }
    if (q == 0 && t->R > 1)
        DALLOC(r->gather, (uint64_t)(t->R - 1) * nw, "the average's slots");
    if (t->streaming) {
        for (int i = 0; i < 2; i++) {
            if ((st = alloc_layout(&r->slot[i].a, sh->max_rows,
                                   sh->max_rows + 1, sh->max_nnz,
                                   sh->max_uniq, sh->max_uniq + 1, mb, r,
                                   err)) != HOG_OK)
                goto out;
            CK(cudaEventCreateWithFlags(&r->slot[i].ready,
                                        cudaEventDisableTiming));
            CK(cudaEventCreateWithFlags(&r->slot[i].free_,
                                        cudaEventDisableTiming));
            CK(cudaEventRecord(r->slot[i].free_, r->s));
        }
    } else {
        if ((st = alloc_layout(&r->whole, sh->n_y, sh->n_roff, sh->n_nnz,
                               sh->n_tcol, sh->n_toff, mb, r, err)) != HOG_OK)
            goto out;
        if ((st = upload_shard(r, mb, err)) != HOG_OK)
            goto out;
    }
out:
    return st;
}

/* Peer access between replica q's GPU and replica 0's, or host staging
 * where the GPUs cannot reach each other (said once per pair). */
static hog_status link_init(hog_cuda_trainer *t, unsigned q, hog_err *err)
{
    struct replica *r = &t->r[q], *z = &t->r[0];
    hog_status st = HOG_OK;
    int a = 0, b = 0;
    if (r->dev == z->dev) {
        r->link = LINK_SAME;
        return HOG_OK;
    }
    CR(cudaDeviceCanAccessPeer(&a, z->dev, r->dev));
    CR(cudaDeviceCanAccessPeer(&b, r->dev, z->dev));
    if (a && b) {
        int pair[2][2] = { { z->dev, r->dev }, { r->dev, z->dev } };
        for (int i = 0; i < 2; i++) {
            CR(cudaSetDevice(pair[i][0]));
            cudaError_t e = cudaDeviceEnablePeerAccess(pair[i][1], 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();
            else if ((st = cuda_check(e, "cudaDeviceEnablePeerAccess",
                                      __FILE__, __LINE__, err)) != HOG_OK)
                return st;
        }
        r->link = LINK_PEER;
        return HOG_OK;
    }
    r->link = LINK_HOST;
    r->stage = (float *)hog_cuda_host_alloc(t->p.n_weights * 4);
    if (!r->stage)
        return hog_errf(err, HOG_ENOMEM,
                        "out of page-locked host memory to stage GPU %d's "
                        "replica",
                        r->dev);
    bool said = false;
    for (unsigned i = 1; i < q; i++)
        said |= t->r[i].dev == r->dev;
    if (!said && !t->p.quiet)
        fprintf(stderr,
                "hogtrain: note: GPUs %d and %d cannot access each other's "
                "memory; their replicas are averaged through host memory\n",
                z->dev, r->dev);
    return HOG_OK;
}

extern "C" hog_status hog_cuda_trainer_create(const struct hog_cuda_params *p,
                                              const struct hog_cuda_shard *sh,
                                              hog_cuda_trainer **out,
                                              hog_err *err)
{
    *out = NULL;
    hog_cuda_trainer *t = (hog_cuda_trainer *)calloc(
        1, sizeof *t + p->replicas * sizeof(struct replica));
    if (!t)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the GPU trainer");
    t->p = *p;
    t->R = p->replicas;
    for (unsigned q = 0; q < t->R; q++)
        t->r[q].dev = -1;
    hog_status st = HOG_OK;

    /* Resident when every device holds its shards, else streamed. */
    t->streaming = p->force_stream;
    for (unsigned q = 0; q < t->R; q++) {
        bool first = true;
        for (unsigned i = 0; i < q; i++)
            first &= sh[i].dev != sh[q].dev;
        if (!first)
            continue;
        uint64_t res, str;
        size_t fr = 0, tot = 0;
        device_need(t, sh, sh[q].dev, &res, &str);
        CK(cudaSetDevice(sh[q].dev));
        CK(cudaMemGetInfo(&fr, &tot));
        uint64_t usable = fr > ((size_t)512 << 20) ? fr - ((size_t)512 << 20)
                                                   : 0;
        char a[32], b[32], c[32];
        if (str > usable) {
            st = hog_errf(err, HOG_ENOMEM,
                          "GPU %d has %s free of %s, but its replicas need "
                          "%s even with their shards streamed (weights, work "
                          "buffers, two batches); use a smaller --gpu-batch "
                          "or fewer replicas on this GPU",
                          sh[q].dev, mib(a, sizeof a, (double)fr),
                          mib(b, sizeof b, (double)tot),
                          mib(c, sizeof c, (double)str));
            goto out;
        }
        if (res > usable && !t->streaming) {
            t->streaming = true;
            if (!p->quiet)
                fprintf(stderr,
                        "hogtrain: note: GPU %d's shard needs %s but %s is "
                        "free; batches are streamed from host memory every "
                        "epoch\n",
                        sh[q].dev, mib(a, sizeof a, (double)res),
                        mib(b, sizeof b, (double)fr));
        }
    }
    for (unsigned q = 0; q < t->R && st == HOG_OK; q++)
        st = replica_init(t, q, &sh[q], err);
    for (unsigned q = 1; q < t->R && st == HOG_OK; q++)
        st = link_init(t, q, err);
out:
    if (st != HOG_OK) {
        hog_cuda_trainer_destroy(t);
        return st;
    }
    *out = t;
    return HOG_OK;
}
