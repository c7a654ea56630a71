/*
 * The replica average of the CUDA backend (hog_cuda_average): every
 * replica's weights gathered into replica 0's slots (a copy on one GPU,
 * a peer copy between GPUs, or through page-locked host memory where
 * they cannot reach each other), averaged in replica order on replica 0,
 * and copied back; all queued on the streams, ordered by events. And the
 * weights out to the host (hog_cuda_weights).
 */
#include "gpu/internal.cuh"

/* Replica q's weights into replica 0's gather slot (queued on stream 0). */
static hog_status gather(hog_cuda_trainer *t, unsigned q, hog_err *err)
{
    struct replica *r = &t->r[q], *z = &t->r[0];
    size_t bytes = t->p.n_weights * sizeof(float);
    float *dst = z->gather + (uint64_t)(q - 1) * t->p.n_weights;
    CR(cudaSetDevice(r->dev));
    if (r->link == LINK_HOST) {
        CR(cudaMemcpyAsync(r->stage, r->w, bytes, cudaMemcpyDeviceToHost,
                           r->s));
        CR(cudaEventRecord(r->done, r->s));
        CR(cudaSetDevice(z->dev));
        CR(cudaStreamWaitEvent(z->s, r->done, 0));
        CR(cudaMemcpyAsync(dst, r->stage, bytes, cudaMemcpyHostToDevice,
                           z->s));
        return HOG_OK;
    }
    CR(cudaEventRecord(r->done, r->s));
    CR(cudaSetDevice(z->dev));
    CR(cudaStreamWaitEvent(z->s, r->done, 0));
    if (r->link == LINK_SAME)
        CR(cudaMemcpyAsync(dst, r->w, bytes, cudaMemcpyDeviceToDevice, z->s));
    else
        CR(cudaMemcpyPeerAsync(dst, z->dev, r->w, r->dev, bytes, z->s));
    return HOG_OK;
}

/* Replica 0's (averaged) weights back into replica q; q's stream waits. */
static hog_status scatter_back(hog_cuda_trainer *t, unsigned q, hog_err *err)
{
    struct replica *r = &t->r[q], *z = &t->r[0];
    size_t bytes = t->p.n_weights * sizeof(float);
    CR(cudaSetDevice(z->dev));
    if (r->link == LINK_HOST) {
        CR(cudaMemcpyAsync(r->stage, z->w, bytes, cudaMemcpyDeviceToHost,
                           z->s));
        CR(cudaEventRecord(z->done, z->s));
        CR(cudaSetDevice(r->dev));
        CR(cudaStreamWaitEvent(r->s, z->done, 0));
        CR(cudaMemcpyAsync(r->w, r->stage, bytes, cudaMemcpyHostToDevice,
                           r->s));
        return HOG_OK;
    }
    if (r->link == LINK_SAME)
        CR(cudaMemcpyAsync(r->w, z->w, bytes, cudaMemcpyDeviceToDevice, z->s));
    else
        CR(cudaMemcpyPeerAsync(r->w, r->dev, z->w, z->dev, bytes, z->s));
    CR(cudaEventRecord(z->done, z->s));
    CR(cudaSetDevice(r->dev));
    CR(cudaStreamWaitEvent(r->s, z->done, 0));
    return HOG_OK;
}

extern "C" hog_status hog_cuda_average(hog_cuda_trainer *t, hog_err *err)
{
    if (t->R < 2)
        return HOG_OK;
    hog_status st;
    for (unsigned q = 1; q < t->R; q++)
        if ((st = gather(t, q, err)) != HOG_OK)
            return st;
    struct replica *z = &t->r[0];
    CR(cudaSetDevice(z->dev));
    CR(launch_average(z->s, t->p.n_weights, z->w, z->gather, t->R - 1,
                      1.0f / (float)t->R));
    /* LINK_HOST staging reuses a replica's stage buffer, whose gather copy
     * finished before the average ran on stream 0 (it waited for it). */
    for (unsigned q = 1; q < t->R; q++)
        if ((st = scatter_back(t, q, err)) != HOG_OK)
            return st;
    return HOG_OK;
}

extern "C" hog_status hog_cuda_weights(hog_cuda_trainer *t, float *w,
                                       hog_err *err)
{
    for (unsigned q = t->R; q-- > 0;) {
        CR(cudaSetDevice(t->r[q].dev));
        CR(cudaStreamSynchronize(t->r[q].s));
        CR(cudaStreamSynchronize(t->r[q].copy));
    }
    struct replica *z = &t->r[0];
    CR(cudaSetDevice(z->dev));
    CR(cudaMemcpy(w, z->w, t->p.n_weights * sizeof(float),
                  cudaMemcpyDeviceToHost));
    return HOG_OK;
}
