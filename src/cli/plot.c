/* Images drawn by gnuplot: a command writes the script's body, here it
 * gets the terminal of the file's extension (.svg: gnuplot's svg; .png:
 * pngcairo, or libgd's png where gnuplot has no cairo), is fed to gnuplot
 * on its standard input, and the image goes to a temporary file renamed
 * into place. hogtrain bench --plot and train --search-C --plot. */
#include "cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

bool hog_cli_have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

void hog_cli_plot_quoted(FILE *g, const char *s)
{
    fputc('\'', g);
    for (; *s; s++)
        fputs(*s == '\'' ? "''" : (char[2]){ *s, 0 }, g);
    fputc('\'', g);
}

/* Runs gnuplot on script, its image (standard output) into fd. */
static hog_status run_gnuplot(const char *script, size_t len, int fd,
                              hog_err *err)
{
    int p[2];
    if (pipe(p) != 0)
        return hog_errf(err, HOG_EIO, "cannot run gnuplot: %s",
                        strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    char *args[] = { (char[]){ "gnuplot" }, NULL };
    pid_t pid;
    int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[0]);
    if (e != 0) {
        close(p[1]);
        return hog_errf(err, HOG_EIO, "cannot run gnuplot: %s", strerror(e));
    }
    /* A gnuplot that dies early closes the pipe: an error, not SIGPIPE. */
    struct sigaction ign = { .sa_handler = SIG_IGN }, old;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    for (size_t done = 0; done < len;) {
        ssize_t k = write(p[1], script + done, len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* its exit status says why */
        done += (size_t)k;
    }
    close(p[1]);
    sigaction(SIGPIPE, &old, NULL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return hog_errf(err, HOG_EIO, "gnuplot failed (status %d)",
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return HOG_OK;
}

hog_status hog_cli_plot(const char *path,
                        void (*body)(FILE *g, const char *term, void *ctx),
                        void *ctx, hog_err *err)
{
    const char *dot = strrchr(path, '.');
    bool svg = dot && strcmp(dot, ".svg") == 0;
    const char *term = svg ? "svg dynamic" : "pngcairo";
    if (!svg && system("gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1") != 0)
        term = "png"; /* libgd's, where gnuplot has no cairo */
    char *script = NULL;
    size_t len = 0;
    FILE *g = open_memstream(&script, &len);
    if (!g)
        return hog_errf(err, HOG_ENOMEM, "out of memory for the plot");
    body(g, term, ctx);
    if (fclose(g) != 0) {
        free(script);
        return hog_errf(err, HOG_ENOMEM, "out of memory for the plot");
    }
    /* Test seam: the script itself, to see what was drawn. */
    const char *keep = getenv("HOGTRAIN_TEST_PLOT_SCRIPT");
    if (keep && *keep) {
        FILE *k = fopen(keep, "w");
        if (k) {
            fwrite(script, 1, len, k);
            fclose(k);
        }
    }
    hog_outfile o;
    hog_status s = hog_outfile_open(&o, path, err);
    if (s == HOG_OK && (s = run_gnuplot(script, len, fileno(o.f), err)) != HOG_OK) {
        hog_outfile_abort(&o);
        char why[HOG_ERR_MAX];
        snprintf(why, sizeof why, "%s", err->msg);
        s = hog_errf(err, s, "%s, drawing %s", why, path);
    } else if (s == HOG_OK) {
        s = hog_outfile_commit(&o, err);
    }
    free(script);
    return s;
}
