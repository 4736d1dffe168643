/* JSON-lines output helpers. */
#include "json.h"

#include <inttypes.h>
#include <math.h>

/* Length of the valid UTF-8 sequence starting at s, 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static int utf8_length(const unsigned char *s)
{
    int n;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xE0) == 0xC0) {
        n = 2;
        cp = s[0] & 0x1F;
    } else if ((s[0] & 0xF0) == 0xE0) {
        n = 3;
        cp = s[0] & 0x0F;
    } else if ((s[0] & 0xF8) == 0xF0) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) /* also stops at the terminating NUL */
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

static void put_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        int n = utf8_length(s);
        if (n == 0) {
            fputs("\\ufffd", f);
            s++;
        } else if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s);
            s++;
        } else if (*s < 0x20) {
            fprintf(f, "\\u%04x", *s);
            s++;
        } else {
            fwrite(s, 1, (size_t)n, f);
            s += n;
        }
    }
    fputc('"', f);
}

static void put_key(struct json_line *j, const char *key)
{
    if (j->fields++ > 0)
        fputc(',', j->f);
    put_string(j->f, key);
    fputc(':', j->f);
}

void json_begin(struct json_line *j, FILE *f)
{
    j->f = f;
    j->fields = 0;
    fputc('{', f);
}

void json_str(struct json_line *j, const char *key, const char *val)
{
    put_key(j, key);
    put_string(j->f, val);
}

void json_int(struct json_line *j, const char *key, int64_t val)
{
    put_key(j, key);
    fprintf(j->f, "%" PRId64, val);
}

void json_num(struct json_line *j, const char *key, double val)
{
    put_key(j, key);
    if (isfinite(val))
        fprintf(j->f, "%.9g", val); /* enough digits to tell runs apart */
    else
        fputs("null", j->f);
}

void json_end(struct json_line *j)
{
    fputs("}\n", j->f);
}
