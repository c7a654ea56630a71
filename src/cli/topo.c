/* `hogtrain topo`: what the machine looks like and where threads would run. */
#include "cli/cli.h"
#include "gpu/gpu.h"
#include "pool/pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "\n"
    "Prints the machine (sockets, NUMA nodes, cores, PUs, the PUs this\n"
    "process may use), the plan that places worker threads on it, and\n"
    "the CUDA devices (PCI bus id, memory, NUMA node).\n"
    "\n"
    "  -b, --bind SPEC      compact (default), scatter, none, cpus:LIST,\n"
    "                       numa:LIST, socket:LIST, plus +no_smt or\n"
    "                       +oversubscribe; LIST is like 0-3,8,10-11\n"
    "  -t, --threads N      threads to place (default 0: one per core)\n"
    "      --no-smt         at most one thread per core\n"
    "      --oversubscribe  allow more threads than PUs (they wrap around)\n"
    "      --synthetic DESC plan for an hwloc synthetic machine,\n"
    "                       e.g. \"pack:2 numa:2 core:8 pu:2\"\n"
    "      --xml FILE       plan for a machine saved by lstopo --of xml\n"
    "      --allowed LIST   use only these PUs, as taskset would\n"
    "  -h, --help           this text\n"
    "\n"
    "See docs/POOL.md for what each policy does.\n";

static const struct hog_cli_cmd cmd = {
    "topo",
    "hogtrain topo [--bind SPEC] [--threads N] [--no-smt] [--oversubscribe]\n"
    "                     [--synthetic DESC | --xml FILE] [--allowed LIST]",
    NULL,
    help,
};


static void print_index(int v, int width)
{
    if (v < 0)
        printf(" %*s", width, "-");
    else
        printf(" %*d", width, v);
}

static void print_report(const struct hog_topo *t, const struct hog_plan *p,
                         const char *source, const struct hog_bind *b)
{
    struct hog_topo_info in;
    char allowed[512], spec[512];
    hog_topo_info(t, &in);
    printf("topology    %s\n", source);
    printf("sockets     %u\n", in.sockets);
    printf("NUMA nodes  %u\n", in.numa_nodes);
    printf("cores       %u\n", in.cores);
    printf("PUs         %u\n", in.pus);
    printf("allowed     %u PUs on %u cores: %s\n", in.allowed_pus,
           in.allowed_cores, hog_topo_allowed_str(t, allowed, sizeof allowed));
    printf("binding     %s, %u thread%s%s%s\n", hog_bind_str(b, spec, sizeof spec),
           p->nthreads, p->nthreads == 1 ? "" : "s",
           p->pin ? "" : " (not pinned)",
           p->oversubscribed ? " (oversubscribed: some PUs run several)" : "");
    printf("\nthread     PU   core   NUMA socket\n");
    for (unsigned i = 0; i < p->nthreads; i++) {
        const struct hog_place *pl = &p->place[i];
        printf("%6u", i);
        print_index(pl->pu, 6);
        print_index(pl->core, 6);
        print_index(pl->numa, 6);
        print_index(pl->socket, 6);
        putchar('\n');
    }
}

/* The CUDA devices: PCI bus id, memory, NUMA node; or why there are none. */
static void print_gpus(void)
{
    struct hog_gpu_info g[HOG_GPU_MAX];
    unsigned n = 0;
    hog_err err = { { 0 } };
    if (hog_gpu_list(g, HOG_GPU_MAX, &n, &err) != HOG_OK) {
        printf("\nGPUs        none: %s\n", err.msg);
        return;
    }
    printf("\nGPUs        %u\n", n);
    printf("\n   GPU  PCI bus id        memory (free)          NUMA  name\n");
    for (unsigned i = 0; i < n && i < HOG_GPU_MAX; i++) {
        printf("%6d  %-16s %7.1f GiB (%7.1f GiB)", g[i].index, g[i].pci,
               (double)g[i].mem_total / (1u << 30),
               (double)g[i].mem_free / (1u << 30));
        print_index(g[i].numa, 6);
        printf("  %s (sm_%d%d, %d SMs)\n", g[i].name, g[i].cc_major,
               g[i].cc_minor, g[i].sms);
    }
}

int hog_cli_topo(int argc, char **argv)
{
    enum { OPT_NO_SMT = HOG_CLI_OPT_OWN, OPT_OVERSUB, OPT_SYNTHETIC, OPT_XML, OPT_ALLOWED };
    static const struct option opts[] = {
        { "bind", required_argument, NULL, 'b' },
        { "threads", required_argument, NULL, 't' },
        { "no-smt", no_argument, NULL, OPT_NO_SMT },
        { "oversubscribe", no_argument, NULL, OPT_OVERSUB },
        { "synthetic", required_argument, NULL, OPT_SYNTHETIC },
        { "xml", required_argument, NULL, OPT_XML },
        { "allowed", required_argument, NULL, OPT_ALLOWED },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *spec = NULL, *synthetic = NULL, *xml = NULL, *allowed = NULL;
    unsigned threads = 0;
    bool no_smt = false, oversubscribe = false;
    int ch, rc;
    struct hog_cli_parser op;
    hog_cli_parser_init(&op, &cmd, "b:t:h", opts);
    while ((ch = hog_cli_getopt(&op, argc, argv)) > 0) {
        switch (ch) {
        case 'b': spec = optarg; break;
        case 't':
            if ((rc = hog_cli_parse_threads(&cmd, optarg, &threads)) != HOG_EXIT_OK)
                return rc;
            break;
        case OPT_NO_SMT: no_smt = true; break;
        case OPT_OVERSUB: oversubscribe = true; break;
        case OPT_SYNTHETIC: synthetic = optarg; break;
        case OPT_XML: xml = optarg; break;
        case OPT_ALLOWED: allowed = optarg; break;
        default:
            return hog_cli_bad_option(&cmd, '?', argv);
        }
    }
    if (ch < 0)
        return op.status;
    if ((rc = hog_cli_operands(&cmd, argc, argv, 0, NULL, NULL)) >= 0)
        return rc;
    if (synthetic && xml)
        return hog_cli_usage_error(&cmd, "give --synthetic or --xml, not both");

    hog_err err = { { 0 } };
    struct hog_bind b;
    if (hog_bind_parse(spec, &b, &err) != HOG_OK)
        return hog_cli_usage_error(&cmd, "%s", err.msg);
    b.no_smt |= no_smt;
    b.oversubscribe |= oversubscribe;

    struct hog_topo *t;
    hog_status st = hog_topo_load(&t, synthetic, xml, allowed, &err);
    if (st != HOG_OK) {
        if (st == HOG_EINVAL)
            return hog_cli_usage_error(&cmd, "%s", err.msg);
        return hog_cli_fail("%s", err.msg);
    }
    struct hog_plan *p;
    st = hog_topo_plan(t, &b, threads, &p, &err);
    if (st != HOG_OK) {
        hog_topo_free(t);
        return hog_cli_usage_error(&cmd, "%s", err.msg);
    }
    char source[1024];
    if (synthetic)
        snprintf(source, sizeof source, "synthetic \"%s\"", synthetic);
    else if (xml)
        snprintf(source, sizeof source, "XML %s", xml);
    else
        snprintf(source, sizeof source, "this machine");
    print_report(t, p, source, &b);
    if (!synthetic && !xml)
        print_gpus();
    hog_plan_free(p);
    hog_topo_free(t);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        return hog_cli_fail("topo: cannot write the report (%s)",
                            strerror(errno));
    }
    return HOG_EXIT_OK;
}
