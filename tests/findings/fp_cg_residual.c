/* fp_cg_residual.c: a conjugate gradient solver shaped like NVIDIA's
 * conjugateGradient sample (cuda-samples, Samples/4_CUDA_Libraries). A
 * tridiagonal system in CSR form (row offsets, columns, values) and the
 * right-hand side are uploaded once. Each iteration runs the SpMV and the
 * vector updates as kernels, and, as the sample's cublasSdot with a host
 * result pointer does, reads two scalars back with a blocking cudaMemcpy of
 * 4 bytes: p.Ap, to compute alpha on the host, and r.r, to compute beta and
 * test convergence in the while condition. Each read waits for every kernel
 * queued before it: the GPU idles while the host divides two floats. The
 * solution is read once at the end. Everything is freed at exit.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=40us
 * TRUTH: sync-in-loop @ pap
 * TRUTH: sync-in-loop @ rr
 * (both reads stall the GPU every iteration; the fix is the same for both,
 * keep the scalars on the device (cuBLAS device pointer mode, kernels that
 * read alpha and beta from device memory) and test convergence every N
 * iterations, but they are two call sites; small-copies would be the wrong
 * diagnosis: the cost is the wait, not the 4 bytes) */
#include "fp_common.h"

#include <math.h>

#define N (1 << 18)
#define NNZ (3 * N - 2)
#define MAX_ITER 300

/* The sample's genTridiag: a random symmetric diagonally dominant matrix. */
static void gen_tridiag(int *rows, int *cols, float *vals)
{
    int k = 0;
    unsigned x = 12345;
    for (int i = 0; i < N; i++) {
        rows[i] = k;
        for (int j = i - 1; j <= i + 1; j++) {
            if (j < 0 || j >= N)
                continue;
            x = x * 1103515245u + 12345u;
            cols[k] = j;
            vals[k] = j == i ? 4.0f : (float)(x >> 16) / 65536.0f;
            k++;
        }
    }
    rows[N] = k;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    int *rows = malloc((N + 1) * sizeof *rows), *cols = malloc(NNZ * sizeof *cols);
    float *vals = malloc(NNZ * sizeof *vals), *x = malloc(N * sizeof *x);
    float *rhs = malloc(N * sizeof *rhs);
    if (!rows || !cols || !vals || !x || !rhs)
        return 1;
    gen_tridiag(rows, cols, vals);
    for (int i = 0; i < N; i++) {
        rhs[i] = 1.0f;
        x[i] = 0.0f;
    }
    int *d_rows, *d_cols;
    float *d_vals, *d_x, *d_r, *d_p, *d_ax, *d_dot;
    CHECK(cudaMalloc((void **)&d_rows, (N + 1) * sizeof *d_rows));
    CHECK(cudaMalloc((void **)&d_cols, NNZ * sizeof *d_cols));
    CHECK(cudaMalloc((void **)&d_vals, NNZ * sizeof *d_vals));
    CHECK(cudaMalloc((void **)&d_x, N * sizeof *d_x));
    CHECK(cudaMalloc((void **)&d_r, N * sizeof *d_r));
    CHECK(cudaMalloc((void **)&d_p, N * sizeof *d_p));
    CHECK(cudaMalloc((void **)&d_ax, N * sizeof *d_ax));
    CHECK(cudaMalloc((void **)&d_dot, 2 * sizeof *d_dot));
    CHECK(cudaMemcpy(d_rows, rows, (N + 1) * sizeof *rows, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_cols, cols, NNZ * sizeof *cols, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_vals, vals, NNZ * sizeof *vals, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_x, x, N * sizeof *x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_r, rhs, N * sizeof *rhs, cudaMemcpyHostToDevice));
    /* x0 = 0, so r0 = b and r.r = N: the host knows it and seeds both dot slots. */
    float seed[2] = {(float)N, (float)N};
    CHECK(cudaMemcpy(d_dot, seed, sizeof seed, cudaMemcpyHostToDevice));

    const float tol = 1e-5f;
    float r1 = (float)N, r0 = 0.0f, dot = 0.0f, alpha, beta;
    int iter = 1;
    while (r1 > tol * tol && iter <= MAX_ITER) {
        if (iter > 1) {
            beta = r1 / r0;
            (void)beta;
            ex_kernel_launch(&k, 0);                       /* p = r + beta p (scal, axpy) */
            ex_kernel_launch(&k, 0);
        } else {
            ex_kernel_launch(&k, 0);                       /* p = r (copy) */
        }
        ex_kernel_launch(&k, 0);                           /* Ax = A p (SpMV) */
        ex_kernel_launch(&k, 0);                           /* dot(p, Ax) */
        CHECK(cudaMemcpy(&dot, d_dot, sizeof dot, cudaMemcpyDeviceToHost)); /* @pap */
        alpha = r1 / dot;
        (void)alpha;
        ex_kernel_launch(&k, 0);                           /* x += alpha p */
        ex_kernel_launch(&k, 0);                           /* r -= alpha Ax */
        r0 = r1;
        ex_kernel_launch(&k, 0);                           /* dot(r, r) */
        CHECK(cudaMemcpy(&r1, d_dot + 1, sizeof r1, cudaMemcpyDeviceToHost)); /* @rr */
        iter++;
    }
    CHECK(cudaMemcpy(x, d_x, N * sizeof *x, cudaMemcpyDeviceToHost));
    printf("iteration = %3d, residual = %e\n", iter - 1, sqrt((double)r1));
    CHECK(cudaFree(d_rows));
    CHECK(cudaFree(d_cols));
    CHECK(cudaFree(d_vals));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_r));
    CHECK(cudaFree(d_p));
    CHECK(cudaFree(d_ax));
    CHECK(cudaFree(d_dot));
    free(rows);
    free(cols);
    free(vals);
    free(x);
    free(rhs);
    ex_kernel_fini(&k);
    return 0;
}
