/* The calling thread's scratch buffer for the host products that need
 * one (transposed and symmetric SpMV, SpMM of column-major vectors and
 * transposed SpMM).  Allocated on every call, a fresh 2 MiB-aligned
 * mapping was faulted in and zeroed again each time, at up to 3x the
 * call's own time (docs/SPMM.md).  So the buffer is kept for the thread's
 * next call, grown when a call needs more, and freed when the thread exits
 * or asks (bsrmv_release_scratch).  Taken by the calling thread before a
 * parallel region, never inside one. */
#include "internal.h"

#include <pthread.h>

typedef struct scratch {
    void *p;
    size_t bytes;
} scratch;

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool have_key;

static void drop(void *v)
{
    scratch *s = v;
    bsrmv_big_free(s->p);
    bsrmv_free(s);
}

static void make_key(void)
{
    have_key = pthread_key_create(&key, drop) == 0;
}

void *bsrmv_scratch(size_t bytes)
{
    pthread_once(&once, make_key);
    if (!have_key)
        return NULL;
    if (bytes == 0) /* an empty product's: still a buffer, not a failure */
        bytes = 1;
    scratch *s = pthread_getspecific(key);
    if (!s) {
        if (!(s = bsrmv_calloc(1, sizeof *s)))
            return NULL;
        if (pthread_setspecific(key, s) != 0) {
            bsrmv_free(s);
            return NULL;
        }
    }
    if (bytes <= s->bytes)
        return s->p;
    /* The old contents are not kept: free first, so the peak is the new size. */
    bsrmv_big_free(s->p);
    s->p = bsrmv_big_alloc(bytes);
    s->bytes = s->p ? bytes : 0;
    return s->p;
}

void bsrmv_release_scratch(void)
{
    pthread_once(&once, make_key);
    scratch *s = have_key ? pthread_getspecific(key) : NULL;
    if (s) {
        bsrmv_big_free(s->p);
        *s = (scratch){0};
    }
}
