/*
 * The rendezvous' cryptography, over libsodium: HMAC-SHA256 (RFC 2104) for
 * the proof that a peer holds the job's secret, constant-time comparison of
 * proofs, nonces from the system's generator, and SHA-256 for the digest
 * of the training options the ranks compare. Tested against the FIPS 180-4
 * examples and the RFC 4231 vectors (tests/test_net.c).
 *
 * libsodium keeps process-wide state (its random generator, the choice of
 * implementations), so sodium_init() runs once per process, under
 * pthread_once: the one piece of global state here is libsodium's own.
 */
#include "net/net.h"

#include <pthread.h>
#include <sodium.h>

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_rc = -1;

static void sodium_start(void) { sodium_rc = sodium_init(); }

hog_status hog_net_crypto_init(hog_err *err)
{
    pthread_once(&sodium_once, sodium_start);
    /* 0: initialised now, 1: it already was (by the application). */
    if (sodium_rc < 0)
        return hog_errf(err, HOG_EIO, "libsodium could not be initialised "
                        "(sodium_init failed)");
    return HOG_OK;
}

void hog_sha256(const void *data, size_t len, unsigned char out[32])
{
    crypto_hash_sha256(out, data, len);
}

/* crypto_auth_hmacsha256() itself takes a key of exactly 32 bytes; the
 * init/update/final form takes any length (a key longer than the block is
 * hashed first, as RFC 2104 says). */
void hog_hmac_sha256(const void *key, size_t keylen, const void *msg,
                     size_t msglen, unsigned char out[32])
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, keylen ? key : (const void *)"", keylen);
    crypto_auth_hmacsha256_update(&st, msg, msglen);
    crypto_auth_hmacsha256_final(&st, out);
    sodium_memzero(&st, sizeof st);
}

bool hog_net_equal32(const unsigned char *a, const unsigned char *b)
{
    return sodium_memcmp(a, b, 32) == 0;
}

hog_status hog_net_nonce(unsigned char out[32], hog_err *err)
{
    hog_status st = hog_net_crypto_init(err);
    if (st != HOG_OK)
        return st;
    randombytes_buf(out, 32);
    return HOG_OK;
}
