/* bsrmv: the command-line tool.  Each subcommand lives in its own file and
 * parses its own options; `bsrmv COMMAND --help` prints that command's. */
#include "bridge.h"
#include "cli.h"
#include "solve.h"
#ifdef BSRMV_HAVE_GPU_BENCH
#include "bench_gpu.h" /* bsrmv_tune_main */
#endif

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: bsrmv COMMAND [options]      (bsrmv COMMAND --help for its options)\n"
          "  info     what a matrix is made of: sizes, symmetry, row lengths, blocks per bs\n"
          "  bench    time the SpMV against the machine's read bandwidth (and cuSPARSE)\n"
          "  solve    solve A x = b with CG, BiCGSTAB or GMRES on the host or the GPU\n"
          "  tune     GPU builds: time every GPU kernel, write the tune table\n"
          "  bridge   assemble, solve and draw a suspension bridge (an application)\n"
          "  --version, help\n",
          f);
}

int main(int argc, char **argv)
{
    args_init("bsrmv", "bsrmv COMMAND [options]");
    if (argc < 2) {
        usage(stderr);
        return ARGS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (cli_is_help(cmd)) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("bsrmv %s\n", bsrmv_version());
        return 0;
    }
    if (strcmp(cmd, "info") == 0)
        return info_command(argc - 2, argv + 2);
    if (strcmp(cmd, "bench") == 0)
        return bench_command(argc - 2, argv + 2);
    if (strcmp(cmd, "solve") == 0)
        return solve_command(argc - 2, argv + 2);
    if (strcmp(cmd, "bridge") == 0)
        return bridge_main(argc - 2, argv + 2);
#ifdef BSRMV_HAVE_GPU_BENCH
    if (strcmp(cmd, "tune") == 0)
        return bsrmv_tune_main(argc - 1, argv + 1, bench_print_record);
#else
    if (strcmp(cmd, "tune") == 0) {
        const int help = argc > 2 && cli_is_help(argv[2]);
        fprintf(help ? stdout : stderr,
                "bsrmv tune: times the GPU kernels; this build has no CUDA backend "
                "(docs/GPU.md, \"How to tune\")\n");
        return help ? 0 : 1;
    }
#endif
    args_fail("unknown command '%s'", cmd);
    return ARGS_EXIT_USAGE;
}
