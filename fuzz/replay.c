/* A plain driver for the fuzz targets: each argument, a file or a folder
 * of files (in name order), goes once through LLVMFuzzerTestOneInput.
 * The test suite uses it to run the corpora through its own build, with
 * every compiled block size and the optimised kernels that the fuzz
 * build (one block size, sanitizers) does not have. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t *p = realloc(buf, cap);
            if (!p) {
                fprintf(stderr, "replay: out of memory on %s\n", path);
                free(buf);
                fclose(f);
                return 1;
            }
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    long inputs = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st)) {
            fprintf(stderr, "replay: no such file or folder: %s\n", argv[a]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[a]))
                return 1;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[a]);
        if (!d) {
            fprintf(stderr, "replay: cannot read folder %s\n", argv[a]);
            return 1;
        }
        char **names = NULL;
        size_t count = 0, cap = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            if (count == cap) {
                cap = cap ? 2 * cap : 64;
                char **p = realloc(names, cap * sizeof *names);
                if (!p)
                    return 1;
                names = p;
            }
            size_t len = strlen(argv[a]) + strlen(e->d_name) + 2;
            names[count] = malloc(len);
            if (!names[count])
                return 1;
            snprintf(names[count++], len, "%s/%s", argv[a], e->d_name);
        }
        closedir(d);
        qsort(names, count, sizeof *names, by_name);
        for (size_t i = 0; i < count; i++) {
            if (run_file(names[i]))
                return 1;
            inputs++;
            free(names[i]);
        }
        free(names);
    }
    printf("replay: %ld inputs, no failure\n", inputs);
    return 0;
}
