/*
 * Addresses and sockets of the TCP backend: "HOST:PORT" and "[V6]:PORT"
 * checked and resolved, addresses printed as "host:port", listening, and
 * connecting with retries until a deadline. Sockets are non-blocking, with
 * TCP_NODELAY and 4 MiB buffers.
 */
#include "net/tcp_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void hog_tcp_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
        snprintf(buf, len, "%s:%u", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
        snprintf(buf, len, "[%s]:%u", host, port);
    } else {
        snprintf(buf, len, "(unknown address)");
    }
}

bool hog_tcp_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    return false;
}

/* "host:port", "[v6]:port" -> host, port. */
static hog_status split_hostport(const char *s, char *host, size_t hlen,
                                 char *port, size_t plen, hog_err *err)
{
    const char *colon;
    const char *h = s;
    size_t n;
    if (!s || !*s)
        return hog_errf(err, HOG_EINVAL, "no coordinator address (HOST:PORT)");
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        if (!e || e[1] != ':')
            return hog_errf(err, HOG_EINVAL, "coordinator '%s': expected "
                            "[IPV6]:PORT", s);
        h = s + 1;
        n = (size_t)(e - h);
        colon = e + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return hog_errf(err, HOG_EINVAL, "coordinator '%s': expected "
                            "HOST:PORT", s);
        n = (size_t)(colon - s);
    }
    const char *p = colon + 1;
    char *end;
    long v = strtol(p, &end, 10);
    if (!*p || *end || v < 1 || v > 65535 || n == 0 || n >= hlen ||
        strlen(p) >= plen)
        return hog_errf(err, HOG_EINVAL, "coordinator '%s': expected "
                        "HOST:PORT with a port from 1 to 65535", s);
    memcpy(host, h, n);
    host[n] = 0;
    strcpy(port, p);
    return HOG_OK;
}

hog_status hog_net_check_address(const char *hostport, hog_err *err)
{
    char host[256], port[16];
    return split_hostport(hostport, host, sizeof host, port, sizeof port, err);
}

hog_status hog_tcp_resolve(const char *hostport, struct sockaddr_storage *ss,
                           socklen_t *sl, hog_err *err)
{
    char host[256], port[16];
    hog_status st = split_hostport(hostport, host, sizeof host, port,
                                   sizeof port, err);
    if (st != HOG_OK)
        return st;
    struct addrinfo hints = { 0 }, *res;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0)
        return hog_errf(err, HOG_ENET, "coordinator '%s': cannot resolve "
                        "%s: %s", hostport, host, gai_strerror(rc));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sl = res->ai_addrlen;
    freeaddrinfo(res);
    return HOG_OK;
}

void hog_tcp_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void set_bufs(int fd)
{
    int sz = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
}

void hog_tcp_sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    nanosleep(&ts, NULL);
}

hog_status hog_tcp_listen_on(const struct sockaddr *sa, socklen_t sl,
                             int *fd_out, hog_err *err)
{
    char a[ADDR_MAX];
    hog_tcp_addr_str(sa, a, sizeof a);
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return hog_errf(err, HOG_ENET, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    set_bufs(fd);
    if (bind(fd, sa, sl) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        close(fd);
        return hog_errf(err, HOG_ENET, "cannot listen on %s: %s", a,
                        strerror(e));
    }
    hog_tcp_set_nonblock(fd);
    *fd_out = fd;
    return HOG_OK;
}

/* Connects to addr, retrying refused attempts until the deadline. */
hog_status hog_tcp_connect_until(const struct sockaddr *sa, socklen_t sl,
                                 double deadline, const char *what, int *out,
                                 hog_err *err)
{
    char a[ADDR_MAX];
    hog_tcp_addr_str(sa, a, sizeof a);
    int last = 0;
    double t0 = hog_now();
    while (hog_now() < deadline) {
        int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return hog_errf(err, HOG_ENET, "socket: %s", strerror(errno));
        set_bufs(fd);
        hog_tcp_set_nonblock(fd);
        int rc = connect(fd, sa, sl);
        if (rc != 0 && errno == EINPROGRESS) {
            double left = deadline - hog_now();
            if (hog_tcp_io_wait(fd, POLLOUT, left > 0 ? left : 0) == IO_OK) {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
                rc = e ? -1 : 0;
                errno = e ? e : ETIMEDOUT;
            } else {
                errno = ETIMEDOUT;
            }
        }
        if (rc == 0) {
            *out = fd;
            return HOG_OK;
        }
        last = errno;
        close(fd);
        hog_tcp_sleep_s(0.05);
    }
    return hog_errf(err, HOG_ETIMEDOUT, "could not reach %s at %s within "
                    "%.3g s: %s", what, a, hog_now() - t0,
                    last ? strerror(last) : "no attempt");
}
