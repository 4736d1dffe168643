/* Command-line helpers shared by the `bsrmv` subcommands: a bad argument
 * prints "bsrmv CMD: what is wrong", the command's one-line usage and where
 * its help is, and exits with status 2. */
#ifndef BSRMV_TOOLS_ARGS_H
#define BSRMV_TOOLS_ARGS_H

#include <stdint.h>

#define ARGS_EXIT_USAGE 2

#if defined(__GNUC__)
#define ARGS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ARGS_PRINTF(f, a)
#endif

/* The command name ("bsrmv solve") and one-line synopsis args_fail prints
 * (call first). */
void args_init(const char *command, const char *synopsis);

void args_fail(const char *fmt, ...) ARGS_PRINTF(1, 2);

/* s as a number / integer in [lo, hi], else args_fail naming opt
 * ([-DBL_MAX, DBL_MAX]: any finite number). */
double args_number(const char *opt, const char *s, double lo, double hi);
int64_t args_integer(const char *opt, const char *s, int64_t lo, int64_t hi);

/* "--opt VALUE" or "--opt=VALUE" at argv[*i] (advancing *i past VALUE);
 * NULL if argv[*i] is not opt. */
const char *args_value(int argc, char **argv, int *i, const char *opt);

#endif
