/* A user of the installed distributed library: bsrmv::bsrmv_mpi brings
 * bsrmv_mpi.h, mpi.h and the libraries (tests/install/consumer.sh builds
 * it; running wants an MPI launcher). */
#include <bsrmv_mpi.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const int64_t row_ptr[3] = {0, 1, 2};
    int64_t first[2];
    const bsrmv_status s = bsrmv_dist_partition(row_ptr, 2, 1, first);
    printf("%s\n", bsrmv_status_string(s));
    MPI_Finalize();
    return s != BSRMV_SUCCESS;
}
