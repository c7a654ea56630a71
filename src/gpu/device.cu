/*
 * The CUDA backend's devices (cuda.h): the count, with the driver's and
 * the runtime's versions checked; each GPU's name, memory and NUMA node;
 * binding a thread near a GPU; page-locked host memory; a copy-bandwidth
 * probe. And the sentences every .cu file makes of a failed CUDA or
 * cuSPARSE call (cuda_check, sparse_check: the call, the GPU, CUDA's
 * reason).
 */
#include "gpu/internal.cuh"

#include <hwloc.h>
#include <hwloc/cudart.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>

const char *mib(char *buf, size_t len, double bytes)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf(buf, len, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    else
        snprintf(buf, len, "%.1f MiB", bytes / (1024.0 * 1024));
    return buf;
}

hog_status cuda_check(cudaError_t e, const char *call, const char *file,
                      int line, hog_err *err)
{
    if (e == cudaSuccess)
        return HOG_OK;
    int dev = -1;
    cudaGetDevice(&dev);
    (void)cudaGetLastError(); /* clear a non-sticky error */
    return hog_errf(err, e == cudaErrorMemoryAllocation ? HOG_ENOMEM : HOG_EIO,
                    "GPU %d: %s failed (%s:%d): %s", dev, call, file, line,
                    cudaGetErrorString(e));
}

hog_status sparse_check(cusparseStatus_t s, const char *call,
                        const char *file, int line, hog_err *err)
{
    if (s == CUSPARSE_STATUS_SUCCESS)
        return HOG_OK;
    int dev = -1;
    cudaGetDevice(&dev);
    return hog_errf(err,
                    s == CUSPARSE_STATUS_ALLOC_FAILED ? HOG_ENOMEM : HOG_EIO,
                    "GPU %d: %s failed (%s:%d): %s", dev, call, file, line,
                    cusparseGetErrorString(s));
}

/* HOGTRAIN_CUDA_RESET_AT_EXIT=1 (the device check's compute-sanitizer
 * runs): every device is reset at exit, so that the leak check reports
 * the allocations never freed; without a reset it reports none. Off by
 * default: a program that uses CUDA itself may still need its devices in
 * its own exit handlers. */
static void reset_devices(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return;
    for (int d = 0; d < n; d++)
        if (cudaSetDevice(d) == cudaSuccess)
            cudaDeviceReset();
}

static void arm_once(void)
{
    const char *e = getenv("HOGTRAIN_CUDA_RESET_AT_EXIT");
    if (e && strcmp(e, "1") == 0)
        atexit(reset_devices);
}

/* Called once the runtime is up (a stream exists): exit handlers run in
 * reverse order, so the reset comes before the runtime's own teardown. */
void reset_at_exit_arm(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, arm_once);
}

extern "C" bool hog_cuda_built(void) { return true; }

extern "C" hog_status hog_cuda_count(int *n, hog_err *err)
{
    *n = 0;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cudaError_t e = cudaGetDeviceCount(n);
    (void)cudaGetLastError();
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (e == cudaSuccess && *n > 0)
        return HOG_OK;
    *n = 0;
    if (e == cudaErrorInsufficientDriver && drv == 0)
        return hog_errf(err, HOG_ENOTSUP,
                        "no CUDA device: no NVIDIA driver is installed on "
                        "this machine (hogtrain was built for CUDA %d.%d)",
                        rt / 1000, rt % 1000 / 10);
    if (e == cudaErrorInsufficientDriver)
        return hog_errf(err, HOG_ENOTSUP,
                        "no CUDA device: the NVIDIA driver supports CUDA "
                        "%d.%d, older than the CUDA %d.%d runtime hogtrain "
                        "was built with; update the driver",
                        drv / 1000, drv % 1000 / 10, rt / 1000,
                        rt % 1000 / 10);
    if (e == cudaSuccess || e == cudaErrorNoDevice)
        return hog_errf(err, HOG_ENOTSUP,
                        "no CUDA device: the driver sees no GPU%s%s%s",
                        vis ? " (CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "",
                        vis ? ")" : "");
    return hog_errf(err, HOG_ENOTSUP, "no CUDA device: %s",
                    cudaGetErrorString(e));
}

/* The GPU's CPUs (hwloc's cudart helper) and the one NUMA node they lie in;
 * -1 when the topology names none or several. set may be NULL. */
static int device_numa(hwloc_topology_t topo, int dev, hwloc_cpuset_t set)
{
    hwloc_cpuset_t cs = set ? set : hwloc_bitmap_alloc();
    int node = -1;
    if (cs && hwloc_cudart_get_device_cpuset(topo, dev, cs) == 0) {
        hwloc_obj_t o = NULL;
        int found = 0;
        while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o))) {
            if (!hwloc_bitmap_iszero(o->cpuset) &&
                hwloc_bitmap_isincluded(o->cpuset, cs)) {
                node = (int)o->os_index;
                found++;
            } else if (hwloc_bitmap_isincluded(cs, o->cpuset)) {
                node = (int)o->os_index; /* the GPU's CPUs inside one node */
                found = 1;
                break;
            }
        }
        if (found != 1)
            node = -1;
    }
    if (!set && cs)
        hwloc_bitmap_free(cs);
    return node;
}

static bool topo_open(hwloc_topology_t *t)
{
    if (hwloc_topology_init(t) != 0)
        return false;
    if (hwloc_topology_load(*t) != 0) {
        hwloc_topology_destroy(*t);
        return false;
    }
    return true;
}

extern "C" hog_status hog_cuda_info(int dev, struct hog_cuda_info *out,
                                    hog_err *err)
{
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    CR(cudaGetDeviceProperties(&prop, dev));
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    CR(cudaDeviceGetPCIBusId(out->pci, (int)sizeof out->pci, dev));
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->sms = prop.multiProcessorCount;
    out->mem_total = prop.totalGlobalMem;
    size_t fr = 0, tot = 0;
    CR(cudaSetDevice(dev));
    CR(cudaMemGetInfo(&fr, &tot));
    out->mem_free = fr;
    out->mem_total = tot;
    out->numa = -1;
    hwloc_topology_t topo;
    if (topo_open(&topo)) {
        out->numa = device_numa(topo, dev, NULL);
        hwloc_topology_destroy(topo);
    }
    return HOG_OK;
}

extern "C" int hog_cuda_bind_near(int dev)
{
    /* This thread's CUDA calls (page-locked allocations) go to dev. */
    if (cudaSetDevice(dev) != cudaSuccess)
        (void)cudaGetLastError();
    hwloc_topology_t topo;
    if (!topo_open(&topo))
        return -1;
    hwloc_cpuset_t cs = hwloc_bitmap_alloc();
    int node = -1;
    if (cs) {
        node = device_numa(topo, dev, cs);
        if (!hwloc_bitmap_iszero(cs) &&
            hwloc_set_cpubind(topo, cs, HWLOC_CPUBIND_THREAD) != 0)
            node = -1;
        hwloc_bitmap_free(cs);
    }
    hwloc_topology_destroy(topo);
    return node;
}

extern "C" void *hog_cuda_host_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

extern "C" void hog_cuda_host_free(void *p)
{
    if (p)
        cudaFreeHost(p);
}

extern "C" hog_status hog_cuda_copy_bandwidth(int dev, size_t bytes,
                                              double *bytes_per_s,
                                              hog_err *err)
{
    hog_status st = HOG_OK;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaStream_t s = NULL;
    const int iters = 20;
    float ms = 0;
    *bytes_per_s = 0;
    CK(cudaSetDevice(dev));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemsetAsync(a, 1, bytes, s));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 2; i++) /* warm up */
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
    CK(cudaEventRecord(e0, s));
    for (int i = 0; i < iters; i++)
        CK(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes,
                           cudaMemcpyDeviceToDevice, s));
    CK(cudaEventRecord(e1, s));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    /* A copy reads and writes each byte. */
    *bytes_per_s = ms > 0 ? 2.0 * (double)bytes * iters / (ms * 1e-3) : 0;
out:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    if (s)
        cudaStreamDestroy(s);
    return st;
}
