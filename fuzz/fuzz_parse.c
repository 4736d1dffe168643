/* The Matrix Market number parsers against strtoll and strtod: the same
 * value whenever the library accepts a token, and acceptance of every
 * token in the documented form (decimal, in range, finite). */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The grammar written out as a character-class walk, separately from the
 * library's: [+-] digits* [. digits*] (at least one digit) [eE [+-] digits+]. */
static int decimal_form(const char *s)
{
    size_t i = 0, mant = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    while (s[i] >= '0' && s[i] <= '9')
        i++, mant++;
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9')
            i++, mant++;
    }
    if (!mant)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        size_t e = 0;
        while (s[i] >= '0' && s[i] <= '9')
            i++, e++;
        if (!e)
            return 0;
    }
    return s[i] == '\0';
}

static int integer_form(const char *s)
{
    size_t i = s[0] == '+' || s[0] == '-';
    size_t d = 0;
    while (s[i] >= '0' && s[i] <= '9')
        i++, d++;
    return d > 0 && s[i] == '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 400)
        return 0;
    char tok[401];
    memcpy(tok, data, size);
    tok[size] = '\0';
    if (strlen(tok) != size)
        return 0;

    int64_t iv;
    bool ok = bsrmv_parse_int(tok, &iv);
    errno = 0;
    char *end;
    long long ref = strtoll(tok, &end, 10);
    bool ref_ok = integer_form(tok) && errno != ERANGE && *end == '\0';
    if (ok != ref_ok || (ok && iv != ref))
        abort();

    double dv;
    ok = bsrmv_parse_real(tok, &dv);
    errno = 0;
    double dref = strtod(tok, &end);
    ref_ok = decimal_form(tok) && *end == '\0' && isfinite(dref);
    if (ok != ref_ok)
        abort();
    if (ok && memcmp(&dv, &dref, sizeof dv) != 0)
        abort();
    return 0;
}
