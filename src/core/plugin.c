/*
 * Plugins loaded on first use (plugin.h). Every failure becomes one
 * sentence naming the file and the remedy, so that a missing optional
 * runtime is a message, never a loader error at startup.
 */
#include "core/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void why(struct hog_plugin *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void why(struct hog_plugin *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
}

/* The folder of the object this code is linked into: libhogtrain.so, or the
 * program linked with libhogtrain.a (its link map has no name, and dladdr
 * would give argv[0]: /proc/self/exe instead). */
static bool self_dir(char *dir)
{
    Dl_info info;
    struct link_map *lm = NULL;
    char path[PATH_MAX];
    if (dladdr1((const void *)&hog_plugin_load, &info, (void **)&lm,
                RTLD_DL_LINKMAP) && lm && lm->l_name && lm->l_name[0]) {
        if (!realpath(lm->l_name, path))
            return false;
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return false;
        path[n] = '\0';
    }
    char *slash = strrchr(path, '/');
    if (!slash)
        return false;
    *slash = '\0';
    memcpy(dir, path, (size_t)(slash - path) + 1);
    return true;
}

static void load(const struct hog_plugin_spec *s, struct hog_plugin *p,
                 const char *path, bool from_env)
{
    snprintf(p->path, sizeof p->path, "%s", path);
    /* The remedy when the file is not the plugin. */
    char fix[256];
    if (from_env)
        snprintf(fix, sizeof fix, "point %s to %s or unset it", s->env,
                 s->file);
    else
        snprintf(fix, sizeof fix, "reinstall hogtrain or set %s to the "
                 "plugin's path", s->env);
    struct stat st;
    if (from_env && stat(path, &st) != 0 && strchr(path, '/')) {
        why(p, "%s not available: %s=%s names no file; %s", s->what, s->env,
            path, fix);
        return;
    }
    (void)dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        /* glibc names the file when the file itself is refused, and only
         * the missing dependency when one of its libraries is. */
        const char *e = dlerror();
        size_t n = strlen(path);
        bool named = e && strncmp(e, path, n) == 0 && e[n] == ':';
        if (named)
            why(p, "%s not available: %s (not a loadable library); %s",
                s->what, e, fix);
        else
            why(p, "%s not available: %s: %s; %s", s->what, path,
                e ? e : "dlopen failed", s->hint_load);
        return;
    }
    const void *t = dlsym(h, s->symbol);
    if (!t) {
        why(p, "%s not available: %s is not a hogtrain plugin (it has no "
               "%s table); %s",
            s->what, path, s->symbol, fix);
        return; /* h stays open: unloading foreign code is not worth it */
    }
    char reason[512];
    if (s->check && !s->check(t, reason, sizeof reason)) {
        why(p, "%s not available: %s: %s; install the %s built with this "
               "hogtrain",
            s->what, path, reason, s->file);
        return;
    }
    p->table = t;
}

void hog_plugin_load(const struct hog_plugin_spec *s, struct hog_plugin *p)
{
    p->table = NULL;
    p->path[0] = p->why[0] = '\0';
    const char *env = s->env ? getenv(s->env) : NULL;
    if (env && env[0]) {
        load(s, p, env, true);
        return;
    }
    char dir[PATH_MAX];
    if (!self_dir(dir)) {
        why(p, "%s not available: cannot tell where libhogtrain was loaded "
               "from to look for %s; set %s to its path",
            s->what, s->file, s->env);
        return;
    }
    /* "/..": the programs in a build tree's subfolders (build/bench/). */
    static const char *const sub[] = { "", "/hogtrain", "/../lib/hogtrain",
                                       "/.." };
    char cand[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        snprintf(cand, sizeof cand, "%s%s/%s", dir, sub[i], s->file);
        if (access(cand, F_OK) == 0) {
            load(s, p, cand, false);
            return;
        }
    }
    why(p, "%s not available: %s is neither in %s nor in its hogtrain/, "
           "../lib/hogtrain/ or ../; set %s to its path or reinstall "
           "hogtrain",
        s->what, s->file, dir, s->env);
}
