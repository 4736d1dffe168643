/* Allocation of the large arrays (values, indices, vectors). */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *bsrmv_big_alloc(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded < bytes)
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
