/*
 * One round of the CUDA backend (hog_cuda_round): each replica's step on
 * its batch of the round, queued on the replica's stream. A streamed
 * batch is first copied into the replica's free device slot on the copy
 * stream (two slots: batch k + 1's upload overlaps batch k's step). The
 * minibatch step: the rows' loss derivatives, the gradient from the
 * batch's compact transpose (both summed in double in a fixed order, so
 * the step is deterministic and agrees with ref.c), the update. The
 * hogwild step: the rows' kernels, then the shrink.
 */
#include "gpu/internal.cuh"

/* Queues the copy of batch b of shard sh into the device slot dst. */
static hog_status copy_batch(struct dbatch *dst, const struct hog_cuda_shard *sh,
                             const struct hog_cuda_batch *b, bool transpose,
                             cudaStream_t s, hog_err *err)
{
    CR(cudaMemcpyAsync(dst->y, sh->y + b->at_row, b->rows * sizeof(float),
                       cudaMemcpyHostToDevice, s));
    CR(cudaMemcpyAsync(dst->roff, sh->roff + b->at_off,
                       (b->rows + 1) * sizeof(int32_t), cudaMemcpyHostToDevice,
                       s));
    if (b->nnz) {
        CR(cudaMemcpyAsync(dst->col, sh->col + b->at_nnz,
                           b->nnz * sizeof(int32_t), cudaMemcpyHostToDevice,
                           s));
        CR(cudaMemcpyAsync(dst->val, sh->val + b->at_nnz,
                           b->nnz * sizeof(float), cudaMemcpyHostToDevice, s));
    }
    if (transpose) {
        CR(cudaMemcpyAsync(dst->toff, sh->toff + b->at_toff,
                           (b->uniq + 1) * sizeof(int32_t),
                           cudaMemcpyHostToDevice, s));
        if (b->uniq)
            CR(cudaMemcpyAsync(dst->tcol, sh->tcol + b->at_uniq,
                               b->uniq * sizeof(int32_t),
                               cudaMemcpyHostToDevice, s));
        if (b->nnz) {
            CR(cudaMemcpyAsync(dst->trow, sh->trow + b->at_nnz,
                               b->nnz * sizeof(int32_t),
                               cudaMemcpyHostToDevice, s));
            CR(cudaMemcpyAsync(dst->tval, sh->tval + b->at_nnz,
                               b->nnz * sizeof(float), cudaMemcpyHostToDevice,
                               s));
        }
    }
    return HOG_OK;
}

/* The minibatch step of replica r on batch b (arrays in a). */
static hog_status step_minibatch(hog_cuda_trainer *t, struct replica *r,
                                 const struct hog_cuda_batch *b,
                                 const struct dbatch *a, double eta,
                                 hog_err *err)
{
    const struct hog_cuda_params *p = &t->p;
    const bool dense = p->l1 > 0 || p->l2 > 0 ||
                       p->schedule == HOG_SCHED_ADAGRAD;
    CR(launch_margin_deriv(r->s, b->rows, a->roff, a->col, a->val, a->y, r->w,
                           r->dv, (int)p->loss, 1.0 / (double)b->rows));
    if (b->uniq)
        CR(launch_grad(r->s, b->uniq, a->toff, a->trow, a->tval, a->tcol,
                       r->dv, dense ? r->gdense : NULL, r->w, eta));
    if (dense)
        CR(launch_update_dense(r->s, p->n_weights, r->w, r->gdense, r->g2,
                               eta, p->l1, p->l2,
                               p->schedule == HOG_SCHED_ADAGRAD));
    return HOG_OK;
}

/* The hogwild step: the rows' gradient steps, then their shrink. */
static hog_status step_hogwild(hog_cuda_trainer *t, struct replica *r,
                               const struct hog_cuda_batch *b,
                               const struct dbatch *a, double eta,
                               hog_err *err)
{
    const struct hog_cuda_params *p = &t->p;
    CR(launch_hogwild(r->s, b->rows, b->nnz, a->roff, a->col, a->val, a->y,
                      r->w, (float)eta, (int)p->loss, r->coef, r->cnt));
    if (p->l1 > 0 || p->l2 > 0) {
        double P, Q;
        hog_gpu_shrink_pq(eta, p->l1, p->l2, b->rows, &P, &Q);
        CR(launch_shrink(r->s, p->n_weights, r->w, P, Q));
    }
    return HOG_OK;
}

/* The entry point of one replica's part of round k. */
static hog_status replica_round(hog_cuda_trainer *t, struct replica *r,
                                uint64_t k, double eta, hog_err *err)
{
    const struct hog_cuda_batch *b = &r->sh->b[k];
    const bool mb = t->p.step == HOG_GPU_STEP_MINIBATCH;
    hog_status st = HOG_OK;
    struct dbatch a;
    struct slot *sl = NULL;
    if (b->rows == 0)
        return HOG_OK; /* the last round's part may be empty */
    CR(cudaSetDevice(r->dev));
    if (t->streaming) {
        sl = &r->slot[r->turn++ & 1];
        CR(cudaStreamWaitEvent(r->copy, sl->free_, 0));
        if ((st = copy_batch(&sl->a, r->sh, b, mb, r->copy, err)) != HOG_OK)
            return st;
        CR(cudaEventRecord(sl->ready, r->copy));
        CR(cudaStreamWaitEvent(r->s, sl->ready, 0));
        a = sl->a;
    } else {
        a = r->whole;
        a.y += b->at_row;
        a.roff += b->at_off;
        a.col += b->at_nnz;
        a.val += b->at_nnz;
        if (mb) {
            a.tcol += b->at_uniq;
            a.toff += b->at_toff;
            a.trow += b->at_nnz;
            a.tval += b->at_nnz;
        }
    }
    st = mb ? step_minibatch(t, r, b, &a, eta, err)
            : step_hogwild(t, r, b, &a, eta, err);
    if (st == HOG_OK && sl)
        CR(cudaEventRecord(sl->free_, r->s));
    return st;
}

extern "C" hog_status hog_cuda_round(hog_cuda_trainer *t, uint64_t k,
                                     double eta, hog_err *err)
{
    for (unsigned q = 0; q < t->R; q++) {
        hog_status st = replica_round(t, &t->r[q], k, eta, err);
        if (st != HOG_OK)
            return st;
    }
    return HOG_OK;
}
