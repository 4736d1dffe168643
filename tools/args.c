#include "args.h"

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cmd_name = "bsrmv";
static const char *cmd_synopsis;

void args_init(const char *command, const char *synopsis)
{
    cmd_name = command;
    cmd_synopsis = synopsis;
}

void args_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cmd_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (cmd_synopsis)
        fprintf(stderr, "usage: %s\n", cmd_synopsis);
    fprintf(stderr, "Run '%s --help' for the options.\n", cmd_name);
    exit(ARGS_EXIT_USAGE);
}

double args_number(const char *opt, const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        if (lo == -DBL_MAX && hi == DBL_MAX)
            args_fail("%s: expected a finite number, got '%s'", opt, s);
        args_fail("%s: expected a number in [%g, %g], got '%s'", opt, lo, hi, s);
    }
    return v;
}

int64_t args_integer(const char *opt, const char *s, int64_t lo, int64_t hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        args_fail("%s: expected an integer in [%lld, %lld], got '%s'", opt, (long long)lo,
                  (long long)hi, s);
    return v;
}

const char *args_value(int argc, char **argv, int *i, const char *opt)
{
    size_t len = strlen(opt);
    if (strncmp(argv[*i], opt, len) != 0)
        return NULL;
    if (argv[*i][len] == '=')
        return argv[*i] + len + 1;
    if (argv[*i][len] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        args_fail("%s needs a value", opt);
    return argv[++*i];
}
