/*
 * libFuzzer harness: the decoders of compressed text (src/io/decompress.c)
 * and the read-ahead thread that drives them (src/io/readahead.c).
 *
 * The first byte picks the format (gzip, xz, zstd) and the sizes of the
 * pieces the compressed bytes arrive in and of the room the text goes to,
 * so that every boundary of the decoders' step loop is fuzzed (a gzip
 * magic split across two pieces, a frame ending with the input, output
 * full at the end); the rest is the compressed file. Each decoder must end
 * with the text or with an error, never loop without progress: a hang is
 * a finding. Then the whole input, as a file, goes through hog_data_load
 * in small windows (sniffed by its magic, decompressed by the thread, its
 * text parsed). Any status is fine; a crash, a leak, undefined behaviour
 * or a hang is a finding. Text beyond 8 MiB is not decoded further (a
 * small input may expand a thousandfold).
 */
#include "fuzz_common.h"

#include "io/io.h"

#include <string.h>

#define TEXT_MAX ((size_t)8 << 20)

static void decode_in_pieces(enum hog_file_kind k, const uint8_t *in,
                             size_t len, size_t piece, size_t room)
{
    struct hog_decoder *d = NULL;
    hog_err err;
    if (hog_decoder_open(k, "fuzz", &d, &err) != HOG_OK)
        abort(); /* only memory could refuse, and there is plenty */
    static char out[1 << 16];
    size_t used = 0, given = 0, total = 0;
    /* Every round either moves a byte, gives more input, or ends: the
     * rounds are bounded by the bytes in and out. */
    for (size_t rounds = 0;; rounds++) {
        if (rounds > 4 * (len + TEXT_MAX / room + 16))
            abort(); /* the loop made no progress */
        size_t o = 0, before = used;
        bool end = false, last = given == len;
        hog_status st = hog_decoder_run(d, in, given, &used, out, room, &o,
                                        last, &end, &err);
        total += o;
        if (st != HOG_OK) {
            if (st != HOG_ECORRUPT && st != HOG_ENOMEM)
                abort();
            if (strncmp(err.msg, "fuzz: ", 6) != 0)
                abort(); /* every error names the file */
            break;
        }
        if (end || total > TEXT_MAX)
            break;
        if (o == 0 && used == before) {
            if (last)
                abort(); /* whole input, no progress, no end, no error */
            given = given + piece < len ? given + piece : len;
        }
    }
    hog_decoder_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    static const enum hog_file_kind kinds[] = { HOG_FILE_GZIP, HOG_FILE_XZ,
                                                HOG_FILE_ZSTD };
    uint8_t mode = data[0];
    size_t piece = (size_t)1 << ((mode >> 2) & 7);   /* 1 .. 128 bytes */
    size_t room = (size_t)1 << (4 + ((mode >> 5) & 7)); /* 16 .. 2048 bytes */
    decode_in_pieces(kinds[(mode & 3) % 3], data + 1, size - 1, piece, room);

    /* The loader: magic, the read-ahead thread, the parser. */
    setenv("HOGTRAIN_TEST_TEXT_WINDOW", "4096", 1);
    hog_load_opts o;
    hog_load_opts_init(&o);
    o.threads = 1;
    hog_data *d = NULL;
    hog_err err;
    hog_status st = hog_data_load(hog_fuzz_file(data + 1, size - 1), &o, &d,
                                  &err);
    if (st == HOG_OK)
        hog_data_free(d);
    else if (d)
        abort(); /* an error leaves no data behind */
    return 0;
}
