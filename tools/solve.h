/* `bsrmv solve`: iterative solves on generated matrices, timed against the
 * memory-bandwidth bound of their traffic (tools/solve.c). */
#ifndef BSRMV_TOOLS_SOLVE_H
#define BSRMV_TOOLS_SOLVE_H

/* argv[0] is the first option after "solve".  Returns the exit status. */
int solve_command(int argc, char **argv);

#endif
