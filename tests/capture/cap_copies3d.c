/* cap_copies3d.c: the runtime's other ways of moving bytes: cudaMalloc3D and
 * 3D copies up and down (pitched host boxes), a 3D peer copy, a batch of three
 * copies in one cudaMemcpyBatchAsync, and managed memory prefetched to the
 * device and back to the host.  Prints what test_copies3d.py looks for. */
#include "cap_util.h"

/* The host box: DEPTH slices of SLICE_ROWS rows PITCH bytes apart, of which
 * the extent (WIDTH x HEIGHT x DEPTH) at (X, Y, 0) is copied. */
enum { WIDTH = 100, HEIGHT = 6, DEPTH = 4, PITCH = 128, SLICE_ROWS = 8, X = 3, Y = 1 };

/* driver_functions.h's helpers are C++ (cuda_runtime.h). */
static struct cudaExtent extent(size_t w, size_t h, size_t d)
{
    return (struct cudaExtent){.width = w, .height = h, .depth = d};
}

static struct cudaPitchedPtr pitched(void *p, size_t pitch, size_t xsize, size_t ysize)
{
    return (struct cudaPitchedPtr){.ptr = p, .pitch = pitch, .xsize = xsize, .ysize = ysize};
}

int main(void)
{
    CHECK_OK(cudaSetDevice(0));
    struct cudaExtent ext = extent(WIDTH, HEIGHT, DEPTH);
    struct cudaPitchedPtr dev;
    CHECK_OK(cudaMalloc3D(&dev, ext));
    printf("malloc3d_bytes %zu\n", dev.pitch * HEIGHT * DEPTH);
    CAP_PRINT("dev", dev.ptr);

    size_t box_bytes = (size_t)PITCH * SLICE_ROWS * DEPTH;
    unsigned char *box = malloc(box_bytes);
    CHECK(box != NULL);
    for (size_t i = 0; i < box_bytes; i++)
        box[i] = (unsigned char)(i * 13 + 1);
    printf("box3d %d %d %d %d %d %d %d\n", WIDTH, HEIGHT, DEPTH, PITCH, SLICE_ROWS, X, Y);
    CAP_PRINT("box", box);

    /* Up from pageable memory, back down into pinned memory laid out tight. */
    struct cudaMemcpy3DParms up = {
        .srcPtr = pitched(box, PITCH, PITCH, SLICE_ROWS),
        .srcPos = {.x = X, .y = Y, .z = 0}, .dstPtr = dev, .extent = ext,
        .kind = cudaMemcpyHostToDevice};
    CHECK_OK(cudaMemcpy3D(&up));
    unsigned char *back = NULL;
    CHECK_OK(cudaMallocHost((void **)&back, (size_t)WIDTH * HEIGHT * DEPTH));
    struct cudaMemcpy3DParms down = {
        .srcPtr = dev, .dstPtr = pitched(back, WIDTH, WIDTH, HEIGHT), .extent = ext,
        .kind = cudaMemcpyDeviceToHost};
    CHECK_OK(cudaMemcpy3D(&down));
    CHECK(back[0] == box[(size_t)Y * PITCH + X]);
    CAP_PRINT("back", back);

    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    /* Asynchronously, two slices, from pinned memory. */
    struct cudaMemcpy3DParms up_async = {
        .srcPtr = pitched(back, WIDTH, WIDTH, HEIGHT), .dstPtr = dev,
        .extent = extent(WIDTH, HEIGHT, 2), .kind = cudaMemcpyHostToDevice};
    CHECK_OK(cudaMemcpy3DAsync(&up_async, s));
    /* Device to device between the two halves of the allocation. */
    struct cudaPitchedPtr half = dev;
    half.ptr = (char *)dev.ptr + dev.pitch * HEIGHT * 2;
    struct cudaMemcpy3DPeerParms peer = {.srcPtr = dev, .srcDevice = 0, .dstPtr = half,
                                         .dstDevice = 0,
                                         .extent = extent(WIDTH, HEIGHT, 1)};
    CHECK_OK(cudaMemcpy3DPeer(&peer));
    CHECK_OK(cudaStreamSynchronize(s));   /* back is the batch's source next */

    /* ---- a batch: up from pinned memory, down to pageable, device to device */
    void *d1 = NULL, *d2 = NULL;
    CHECK_OK(cudaMalloc(&d1, 1 << 16));
    CHECK_OK(cudaMalloc(&d2, 1 << 16));
    unsigned char *pageable = malloc(1 << 16);
    CHECK(pageable != NULL);
    memset(back, 9, 1111);
    void *dsts[] = {d1, pageable, d2};
    const void *srcs[] = {back, d1, d1};
    size_t sizes[] = {1111, 2222, 3333};
    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx0 = 0;
    CHECK_OK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 3, &attr, &idx0, 1, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK(pageable[0] == 9 && pageable[1110] == 9);
    CAP_PRINT("d1", d1);
    CAP_PRINT("d2", d2);
    CAP_PRINT("pageable", pageable);

    /* ---- managed memory ------------------------------------------------- */
    unsigned char *m = NULL;
    CHECK_OK(cudaMallocManaged((void **)&m, 1 << 16, cudaMemAttachGlobal));
    struct cudaMemLocation to_dev = {.type = cudaMemLocationTypeDevice, .id = 0};
    struct cudaMemLocation to_host = {.type = cudaMemLocationTypeHost, .id = 0};
    CHECK_OK(cudaMemPrefetchAsync(m, 1 << 16, to_dev, 0, s));
    CHECK_OK(cudaMemPrefetchAsync(m + 4096, 20000, to_host, 0, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CAP_PRINT("managed", m);

    CHECK_OK(cudaFree(m));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(d2));
    CHECK_OK(cudaFree(d1));
    CHECK_OK(cudaFreeHost(back));
    CHECK_OK(cudaFree(dev.ptr));
    free(pageable);
    free(box);
    printf("done\n");
    return 0;
}
