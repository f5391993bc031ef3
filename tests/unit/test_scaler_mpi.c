/* The built-in MPI agreement, for real: run under mpirun with two ranks.
 * Rank 0 alone overflows in iteration 1; with amp_scaler_agree_mpi both ranks
 * must skip that step and end with the same scale. The program uses MPI as
 * any training program would; libampscaler finds MPI_Allreduce at run time. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>

#include "amp_scaler.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    amp_scaler_config c;
    amp_scaler_config_default(&c);
    c.init_scale = 1024;
    amp_scaler *s = amp_scaler_create(&c);
    MPI_Comm comm = MPI_COMM_WORLD;
    amp_scaler_set_agreement(s, amp_scaler_agree_mpi, &comm);
    int failures = 0, checks = 0;
    for (int it = 0; it < 3; it++) {
        float g[3] = {1, 2, (rank == 0 && it == 1) ? INFINITY : 3};
        amp_buffer b = {.data = g, .count = 3, .dtype = AMP_F32};
        int rc = amp_scaler_unscale(s, &b, 1);
        checks += 2;
        failures += rc != 0;
        failures += amp_scaler_step_ok(s) != (it != 1);
        amp_scaler_update(s, NULL);
    }
    checks++;
    failures += amp_scaler_get_scale(s) != 512.0f;
    int total = 0;
    MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_scaler_mpi (%d ranks): %d passed, %d failed\n", size, checks * size - total,
               total);
    amp_scaler_destroy(s);
    MPI_Finalize();
    return total ? 1 : 0;
}
