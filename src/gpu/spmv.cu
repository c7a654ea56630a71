/*
 * The exact solvers' products on one device (cuda.h, hog_cuda_spmv_*): a
 * shard of the rows stays resident across the solver's iterations, as a
 * CSR A and its transpose A^T (a CSR of the columns, made once on the
 * device by cusparseCsr2cscEx2), both in double.
 *
 *   t = A v        cusparseSpMV, non-transposed, on A
 *   out = A^T c    cusparseSpMV, non-transposed, on A^T
 *   (A.*A)^T c     a kernel over A^T: one warp per column
 *
 * Why a transposed copy rather than CUSPARSE_OPERATION_TRANSPOSE on A:
 * cuSPARSE's transposed CSR SpMV scatters with atomic adds (CSR_ALG2 is
 * ALG1 there), so its sums change order from run to run and it is the
 * slow direction; on A^T every output is one row's sum in a fixed order
 * (CSR_ALG2: the same bits on every run), for 12 bytes a nonzero more of
 * device memory. Values as doubles rather than the data's floats with
 * double vectors (cuSPARSE's mixed A in CUDA_R_32F, X and Y in
 * CUDA_R_64F): the uniform double SpMV is the combination every cuSPARSE
 * version and algorithm takes, which counts for code first run on a
 * device later, and the products are then the CPU's (which reads the
 * floats into doubles) up to the order of their sums. The price is 4
 * bytes a nonzero in each of A and A^T; the mixed form is the next step
 * once a device has measured both.
 *
 * One product is in flight per shard at a time: queued on the shard's
 * stream, its vector staged through page-locked memory, its result
 * copied out by hog_cuda_spmv_wait, so that several GPUs work at once.
 */
#include "gpu/internal.cuh"

#include <cstdlib>
#include <cstring>

struct hog_cuda_spmv {
    int dev;
    uint32_t rows, cols;
    uint64_t nnz;
    cudaStream_t s;
    cusparseHandle_t sp;
    int32_t *off, *col, *toff, *trow;
    double *val, *tval;
    double *x, *y;      /* device: cols and rows doubles */
    double *hx, *hy;    /* page-locked staging of x and y */
    void *buf;
    cusparseSpMatDescr_t A, AT;
    cusparseDnVecDescr_t dx, dy;
    double *dest;       /* where the queued product's result goes */
    const double *from; /* hx or hy */
    size_t n_dest;
};

/* (A.*A)^T c over A^T's rows (the columns): lane l of a warp adds entries
 * l, l + 32, ... of its column, then the warp's fixed shuffle tree. */
static __global__ void k_sq_tmv(uint32_t cols, const int32_t *off,
                                const int32_t *row, const double *val,
                                const double *c, double *out)
{
    uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned lane = threadIdx.x & 31u;
    if (w >= cols) /* the whole warp: w is the warp's */
        return;
    double s = 0.0;
    for (int32_t p = off[w] + (int32_t)lane; p < off[w + 1]; p += 32) {
        double a = val[p];
        s += a * a * c[row[p]];
    }
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0)
        out[w] = s;
}

static cudaError_t launch_sq_tmv(cudaStream_t s, uint32_t cols,
                                 const int32_t *off, const int32_t *row,
                                 const double *val, const double *c,
                                 double *out)
{
    const unsigned threads = 256;
    uint64_t blocks = ((uint64_t)cols * 32 + threads - 1) / threads;
    k_sq_tmv<<<(unsigned)(blocks ? blocks : 1), threads, 0, s>>>(
        cols, off, row, val, c, out);
    return cudaGetLastError();
}

extern "C" void hog_cuda_spmv_close(hog_cuda_spmv *t)
{
    if (!t)
        return;
    cudaSetDevice(t->dev);
    if (t->s)
        cudaStreamSynchronize(t->s);
    (void)cudaGetLastError();
    if (t->A)
        cusparseDestroySpMat(t->A);
    if (t->AT)
        cusparseDestroySpMat(t->AT);
    if (t->dx)
        cusparseDestroyDnVec(t->dx);
    if (t->dy)
        cusparseDestroyDnVec(t->dy);
    if (t->sp)
        cusparseDestroy(t->sp);
    cudaFree(t->off);
    cudaFree(t->col);
    cudaFree(t->val);
    cudaFree(t->toff);
    cudaFree(t->trow);
    cudaFree(t->tval);
    cudaFree(t->x);
    cudaFree(t->y);
    cudaFree(t->buf);
    if (t->hx)
        cudaFreeHost(t->hx);
    if (t->hy)
        cudaFreeHost(t->hy);
    if (t->s)
        cudaStreamDestroy(t->s);
    (void)cudaGetLastError();
    free(t);
}

/* cudaMalloc with the sentence of a shard that does not fit. */
static hog_status salloc(void **p, size_t bytes, const hog_cuda_spmv *t,
                         const char *what, hog_err *err)
{
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 8);
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
                    "out of memory on GPU %d: %s for %s of a shard of %u "
                    "rows and %llu nonzeros, with %s free of %s; list more "
                    "GPUs in --gpus (the rows are split among them), or "
                    "train on the CPUs",
                    t->dev, mib(a, sizeof a, (double)bytes), what, t->rows,
                    (unsigned long long)t->nnz, mib(b, sizeof b, (double)fr),
                    mib(c, sizeof c, (double)tot));
}

#define SALLOC(ptr, n, what)                                                  \
    do {                                                                      \
        if ((st = salloc((void **)&(ptr), (size_t)(n) * sizeof *(ptr), t,     \
                         what, err)) != HOG_OK)                               \
            goto out;                                                         \
    } while (0)

extern "C" hog_status hog_cuda_spmv_open(const struct hog_cuda_csr *a,
                                         hog_cuda_spmv **res, hog_err *err)
{
    hog_status st = HOG_OK;
    const double one = 1.0, zero = 0.0;
    size_t need = 0, need_t = 0, cap = 0;
    void *tbuf = NULL;
    *res = NULL;
    hog_cuda_spmv *t = (hog_cuda_spmv *)calloc(1, sizeof *t);
    if (!t)
        return hog_errf(err, HOG_ENOMEM, "out of memory for a GPU shard's "
                        "state");
    t->dev = a->dev;
    t->rows = a->rows;
    t->cols = a->cols;
    t->nnz = a->nnz;
    CK(cudaSetDevice(a->dev));
    CK(cudaStreamCreateWithFlags(&t->s, cudaStreamNonBlocking));
    reset_at_exit_arm();
    SK(cusparseCreate(&t->sp));
    SK(cusparseSetStream(t->sp, t->s));
    SALLOC(t->off, (size_t)a->rows + 1, "the row offsets");
    SALLOC(t->col, a->nnz, "the column indices");
    SALLOC(t->val, a->nnz, "the values");
    SALLOC(t->toff, (size_t)a->cols + 1, "the transpose's offsets");
    SALLOC(t->trow, a->nnz, "the transpose's rows");
    SALLOC(t->tval, a->nnz, "the transpose's values");
    SALLOC(t->x, a->cols, "a vector of the weights");
    SALLOC(t->y, a->rows, "a vector of the rows");
    CK(cudaHostAlloc((void **)&t->hx, ((size_t)a->cols ? a->cols : 1) * 8,
                     cudaHostAllocPortable));
    CK(cudaHostAlloc((void **)&t->hy, ((size_t)a->rows ? a->rows : 1) * 8,
                     cudaHostAllocPortable));
    /* synchronous copies from the caller's pageable arrays: it may free
     * them on return */
    CK(cudaMemcpy(t->off, a->off, ((size_t)a->rows + 1) * 4,
                  cudaMemcpyHostToDevice));
    CK(cudaMemcpy(t->col, a->col, a->nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(t->val, a->val, a->nnz * 8, cudaMemcpyHostToDevice));
    SK(cusparseCsr2cscEx2_bufferSize(
        t->sp, (int)a->rows, (int)a->cols, (int)a->nnz, t->val, t->off,
        t->col, t->tval, t->toff, t->trow, CUDA_R_64F,
        CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
        CUSPARSE_CSR2CSC_ALG1, &need_t));
    CK(cudaMalloc(&tbuf, need_t ? need_t : 8));
    SK(cusparseCsr2cscEx2(t->sp, (int)a->rows, (int)a->cols, (int)a->nnz,
                          t->val, t->off, t->col, t->tval, t->toff, t->trow,
                          CUDA_R_64F, CUSPARSE_ACTION_NUMERIC,
                          CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
                          tbuf));
    CK(cudaStreamSynchronize(t->s));
    SK(cusparseCreateCsr(&t->A, a->rows, a->cols, (int64_t)a->nnz, t->off,
                         t->col, t->val, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                         CUDA_R_64F));
    SK(cusparseCreateCsr(&t->AT, a->cols, a->rows, (int64_t)a->nnz, t->toff,
                         t->trow, t->tval, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                         CUDA_R_64F));
    SK(cusparseCreateDnVec(&t->dx, a->cols, t->x, CUDA_R_64F));
    SK(cusparseCreateDnVec(&t->dy, a->rows, t->y, CUDA_R_64F));
    SK(cusparseSpMV_bufferSize(t->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                               t->A, t->dx, &zero, t->dy, CUDA_R_64F,
                               CUSPARSE_SPMV_CSR_ALG2, &need));
    cap = need;
    SK(cusparseSpMV_bufferSize(t->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                               t->AT, t->dy, &zero, t->dx, CUDA_R_64F,
                               CUSPARSE_SPMV_CSR_ALG2, &need));
    cap = need > cap ? need : cap;
    CK(cudaMalloc(&t->buf, cap ? cap : 8));
out:
    cudaFree(tbuf);
    if (st != HOG_OK) {
        hog_cuda_spmv_close(t);
        return st;
    }
    *res = t;
    return HOG_OK;
}

extern "C" hog_status hog_cuda_spmv_xv(hog_cuda_spmv *t, const double *v,
                                       double *tv, hog_err *err)
{
    const double one = 1.0, zero = 0.0;
    CR(cudaSetDevice(t->dev));
    memcpy(t->hx, v, (size_t)t->cols * 8);
    CR(cudaMemcpyAsync(t->x, t->hx, (size_t)t->cols * 8,
                       cudaMemcpyHostToDevice, t->s));
    SR(cusparseSpMV(t->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, t->A,
                    t->dx, &zero, t->dy, CUDA_R_64F, CUSPARSE_SPMV_CSR_ALG2,
                    t->buf));
    CR(cudaMemcpyAsync(t->hy, t->y, (size_t)t->rows * 8,
                       cudaMemcpyDeviceToHost, t->s));
    t->dest = tv;
    t->from = t->hy;
    t->n_dest = t->rows;
    return HOG_OK;
}

extern "C" hog_status hog_cuda_spmv_xtc(hog_cuda_spmv *t, const double *c,
                                        bool squares, double *out,
                                        hog_err *err)
{
    const double one = 1.0, zero = 0.0;
    CR(cudaSetDevice(t->dev));
    memcpy(t->hy, c, (size_t)t->rows * 8);
    CR(cudaMemcpyAsync(t->y, t->hy, (size_t)t->rows * 8,
                       cudaMemcpyHostToDevice, t->s));
    if (squares)
        CR(launch_sq_tmv(t->s, t->cols, t->toff, t->trow, t->tval, t->y,
                         t->x));
    else
        SR(cusparseSpMV(t->sp, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, t->AT,
                        t->dy, &zero, t->dx, CUDA_R_64F,
                        CUSPARSE_SPMV_CSR_ALG2, t->buf));
    CR(cudaMemcpyAsync(t->hx, t->x, (size_t)t->cols * 8,
                       cudaMemcpyDeviceToHost, t->s));
    t->dest = out;
    t->from = t->hx;
    t->n_dest = t->cols;
    return HOG_OK;
}

extern "C" hog_status hog_cuda_spmv_wait(hog_cuda_spmv *t, hog_err *err)
{
    CR(cudaSetDevice(t->dev));
    CR(cudaStreamSynchronize(t->s));
    if (t->dest)
        memcpy(t->dest, t->from, t->n_dest * 8);
    t->dest = NULL;
    return HOG_OK;
}
