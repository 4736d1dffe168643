/* Every allocation of the library: the large arrays (values, indices,
 * vectors) and the small ones.  Builds with BSRMV_FAULT_INJECTION can make
 * the n-th allocation fail, so tests can reach every out-of-memory path. */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

#ifdef BSRMV_FAULT_INJECTION
/* Shared by all threads: allocations made inside OpenMP regions count too. */
static int64_t fault_seen, fault_at;

void bsrmv_fault_fail_at(int64_t n)
{
    __atomic_store_n(&fault_seen, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fault_at, n, __ATOMIC_SEQ_CST);
}

int64_t bsrmv_fault_count(void)
{
    return __atomic_load_n(&fault_seen, __ATOMIC_SEQ_CST);
}

static bool fault_now(void)
{
    int64_t k = __atomic_add_fetch(&fault_seen, 1, __ATOMIC_SEQ_CST);
    int64_t at = __atomic_load_n(&fault_at, __ATOMIC_SEQ_CST);
    return at > 0 && k == at;
}
#else
static inline bool fault_now(void)
{
    return false;
}
#endif

void *bsrmv_malloc(size_t bytes)
{
    return fault_now() ? NULL : malloc(bytes);
}

void *bsrmv_calloc(size_t n, size_t size)
{
    return fault_now() ? NULL : calloc(n, size);
}

void *bsrmv_realloc(void *p, size_t bytes)
{
    return fault_now() ? NULL : realloc(p, bytes);
}

void bsrmv_free(void *p)
{
    free(p);
}

void *bsrmv_big_alloc(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded < bytes || fault_now())
        return NULL;
    void *p = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
    /* Advice only: a kernel without THP ignores it, so the result is not checked. */
    if (p && align == HUGE_PAGE)
        (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    return p;
}

void bsrmv_big_free(void *p)
{
    free(p);
}
