/* xp_api.h: the numbering of hooked entry points, shared by the preload
 * (records carry the id) and the readers (which store the name). */
#ifndef XP_API_H
#define XP_API_H

/* X(name, layer): layer 0 runtime, 1 driver.  Append only: ids are what the
 * journal stores, so reordering would misname old journals. */
#define XP_API_LIST(X)                                                         \
    X(cudaMalloc, 0)                                                           \
    X(cudaFree, 0)                                                             \
    X(cudaMallocHost, 0)                                                       \
    X(cudaHostAlloc, 0)                                                        \
    X(cudaFreeHost, 0)                                                         \
    X(cudaHostRegister, 0)                                                     \
    X(cudaHostUnregister, 0)                                                   \
    X(cudaMallocManaged, 0)                                                    \
    X(cudaMemcpy, 0)                                                           \
    X(cudaMemcpy_ptds, 0)                                                      \
    X(cudaMemcpyAsync, 0)                                                      \
    X(cudaMemcpyAsync_ptsz, 0)                                                 \
    X(cudaStreamSynchronize, 0)                                                \
    X(cudaStreamSynchronize_ptsz, 0)                                           \
    X(cudaDeviceSynchronize, 0)                                                \
    X(cudaEventSynchronize, 0)                                                 \
    X(cudaSetDevice, 0)

typedef enum xp_api {
    XP_API_NONE = 0,
#define XP_API_ENUM(name, layer) XP_API_##name,
    XP_API_LIST(XP_API_ENUM)
#undef XP_API_ENUM
    XP_API_COUNT
} xp_api;

/* The entry point's name ("cudaMemcpyAsync"), or NULL for an unknown id. */
const char *xp_api_name(unsigned id);

/* "runtime" or "driver", or NULL for an unknown id. */
const char *xp_api_layer(unsigned id);

#endif
