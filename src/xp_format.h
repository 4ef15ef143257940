/* xp_format.h: the journal's on-disk format, shared by the writer in the
 * preload and every reader (ingest, recover).  One definition, pinned by
 * _Static_assert, versioned by XP_JOURNAL_VERSION.
 *
 * A journal is one file per process, <database>.xpj, next to the database.
 *
 *   offset 0            xp_journal_header (XP_JOURNAL_HEADER_SIZE bytes)
 *   then chunk 0, 1, ... each XP_CHUNK_SIZE bytes, starting with xp_chunk_header
 *
 * Every chunk belongs to exactly one thread, which appends records to it
 * sequentially; a full chunk is followed by a fresh one taken from the shared
 * chunk counter.  So a chunk holds one writer's records in order and only the
 * last record a thread was writing when the process died can be incomplete.
 *
 * A record is written body first; its header's `commit` word is stored last
 * (release order): "whole or absent".  Since version 5 the commit word is the
 * record's checksum (xp_record_checksum: of every byte after the commit word,
 * never 0; CRC32C since version 7, the low 32 bits of XXH3-64 before), so a reader tells three states apart:
 * 0, not written yet (or cut off mid-write: the end of the chunk); the
 * checksum, a whole record; anything else, a damaged one, which the reader
 * skips and reports (xp_journal.h) while the records after it stay readable.
 * Before version 5 the commit word was the constant XP_COMMIT and a damaged
 * record could not be told from a whole one.  Records are 8-byte aligned;
 * their size includes the header and any trailing variable-length bytes. */
#ifndef XP_FORMAT_H
#define XP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define XP_JOURNAL_MAGIC   0x4c4e524a50585846ull   /* "FXXPJRNL" little-endian */
#define XP_CHUNK_MAGIC     0x4b4e4843u             /* "CHNK" */
#define XP_COMMIT          0x54494d43u             /* "CMIT": the commit word before version 5 */
#define XP_JOURNAL_VERSION 9     /* 2: copy records grew fingerprint and kernel_seq; MEMSET.
                                    3: copy, memset and sync records grew nvtx_range; NVTX, NAME.
                                    4: stack records grew Python frames; PYCODE; copy
                                       records grew full_fingerprint; sync records
                                       copy_start_ns and the completed copy's fingerprint.
                                    5: the commit word is the record's checksum
                                    6: PAD closes a chunk its writer left
                                    7: the checksum is CRC32C (was XXH3)
                                    8: GRAPH_NODE; copy and memset records grew graph_node
                                       and launch_stack_id (copies a graph launch ran)
                                    9: BLOCK (a caching allocator's blocks: PyTorch's) */
#define XP_JOURNAL_CHECKSUM_VERSION 5   /* the first version whose records carry one */
#define XP_JOURNAL_CRC32C_VERSION 7     /* the first whose checksum is CRC32C */
#define XP_JOURNAL_HEADER_SIZE 4096u
#define XP_CHUNK_SIZE      (256u * 1024u)
#define XP_MAX_RECORD      (XP_CHUNK_SIZE - sizeof(xp_chunk_header))
#define XP_MAX_FRAMES      256
#define XP_JOURNAL_SUFFIX  ".xpj"
/* Disk space a live writer sets aside beside its database (see
 * xp_outfile.h), removed at its exit or by the recovery of its journal. */
#define XP_RESERVE_SUFFIX  ".xpr"

typedef struct xp_journal_header {
    uint64_t magic;           /* XP_JOURNAL_MAGIC */
    uint32_t version;         /* XP_JOURNAL_VERSION */
    uint32_t header_size;     /* XP_JOURNAL_HEADER_SIZE */
    uint32_t chunk_size;      /* XP_CHUNK_SIZE */
    int32_t pid;
    int32_t ppid;
    uint32_t reserved0;
    uint64_t start_wall_ns;   /* CLOCK_REALTIME at start */
    uint64_t start_mono_ns;   /* CLOCK_MONOTONIC at the same moment */
    uint64_t chunks_used;     /* updated as chunks are taken (a hint: readers
                                 also trust the file size) */
} xp_journal_header;

typedef struct xp_chunk_header {
    uint32_t magic;           /* XP_CHUNK_MAGIC: written when the chunk is taken */
    uint32_t tid;             /* the writing thread */
    uint64_t index;           /* chunk number, from 0 */
} xp_chunk_header;
_Static_assert(sizeof(xp_chunk_header) == 16, "chunk header is 16 bytes");

/* Record types. */
typedef enum xp_rec_type {
    XP_REC_META = 1,          /* a key/value for the meta table */
    XP_REC_MODULE = 2,        /* a loaded object, for symbolizing stacks */
    XP_REC_STACK = 3,         /* an interned stack: written once per distinct stack */
    XP_REC_COPY = 4,
    XP_REC_ALLOC = 5,
    XP_REC_FREE = 6,
    XP_REC_SYNC = 7,
    XP_REC_CALL = 8,          /* any other hooked call; recorded only when it failed */
    XP_REC_MEMSET = 9,        /* since version 2 */
    XP_REC_NVTX = 10,         /* an NVTX range pushed, popped, started or ended (version 3) */
    XP_REC_NAME = 11,         /* an interned NVTX name: written once per distinct name (version 3) */
    XP_REC_PYCODE = 12,       /* a Python code object: written once per distinct one (version 4) */
    XP_REC_PAD = 13,          /* the rest of a chunk its writer left for good: no record
                                 follows it in the chunk (version 6); never delivered */
    XP_REC_GRAPH_NODE = 14,   /* a copy or memset node of a CUDA graph, captured or added
                                 (version 7): defined, not run */
    XP_REC_BLOCK = 15,        /* a block a caching allocator handed out or took back
                                 (version 9): no CUDA call, no memory from CUDA */
    /* Never written: what the reader hands its callback in place of damaged
     * bytes (a record whose checksum fails, and whatever follows it up to the
     * next whole record), so that a consumer can count them as lost and move
     * on past them (xp_journal.h). */
    XP_REC_DAMAGED = 0xffff,
} xp_rec_type;

typedef struct xp_rec_header {
    uint32_t commit;          /* the checksum (version < 5: XP_COMMIT), stored last */
    uint16_t type;            /* xp_rec_type */
    uint16_t api;             /* xp_api id (xp_api.h) for call records, else 0 */
    uint32_t size;            /* whole record in bytes, multiple of 8 */
    uint32_t tid;             /* gettid() of the caller */
} xp_rec_header;
_Static_assert(sizeof(xp_rec_header) == 16, "record header is 16 bytes");

/* What every record of a call (COPY, ALLOC, FREE, SYNC, CALL) starts with. */
typedef struct xp_call {
    xp_rec_header h;
    uint64_t start_ns;        /* CLOCK_MONOTONIC when the hook was entered */
    uint64_t end_ns;          /* ... and when the real call returned */
    uint64_t stack_id;        /* XP_REC_STACK id, 0 when stacks are off */
    int32_t status;           /* the call's return code (cudaError_t / CUresult) */
    int32_t device;           /* current device at the call, -1 unknown */
} xp_call;
_Static_assert(sizeof(xp_call) == 48, "call header is 48 bytes");

typedef enum xp_direction {
    XP_DIR_UNKNOWN = 0, XP_DIR_H2D = 1, XP_DIR_D2H = 2, XP_DIR_D2D = 3, XP_DIR_H2H = 4,
} xp_direction;

typedef enum xp_host_mem {
    XP_HOST_NONE = 0,         /* no host side (device to device) */
    XP_HOST_PAGEABLE = 1, XP_HOST_PINNED = 2, XP_HOST_MANAGED = 3,
} xp_host_mem;

typedef enum xp_blocking {
    XP_BLOCK_SYNC = 1,        /* the API blocks by definition */
    XP_BLOCK_ASYNC = 2,       /* returned before the copy completed */
    XP_BLOCK_ASYNC_PAGEABLE = 3, /* an async API that staged pageable memory: the caller was held */
} xp_blocking;

/* How a copy's content was fingerprinted. */
typedef enum xp_fp_kind {
    XP_FP_NONE = 0,           /* not known: fingerprint is meaningless */
    XP_FP_FULL = 1,           /* XXH3-64 of every byte copied */
    XP_FP_SAMPLED = 2,        /* XXH3-64, seeded with the size, of XP_FP_BLOCKS blocks of
                                 XP_FP_BLOCK bytes at fixed, evenly spread offsets */
} xp_fp_kind;

/* Copies up to this many bytes are fingerprinted in full at the default
 * setting; larger ones are sampled. */
#define XP_FP_THRESHOLD (64u * 1024u)
#define XP_FP_BLOCKS 16u
#define XP_FP_BLOCK 256u

typedef struct xp_rec_copy {
    xp_call c;
    uint64_t src, dst;
    uint64_t bytes;
    uint64_t stream;          /* the handle as passed (0 = default stream) */
    uint8_t direction;        /* xp_direction, cudaMemcpyDefault already resolved */
    uint8_t host_mem;         /* xp_host_mem */
    uint8_t blocking;         /* xp_blocking */
    uint8_t kind;             /* the cudaMemcpyKind passed, 255 if the API has none */
    uint8_t fingerprint_kind; /* xp_fp_kind (version 1: a zero reserved byte, so NONE) */
    uint8_t reserved[3];
    /* Version 2 (a version 1 record ends here, XP_REC_COPY_V1_SIZE bytes). */
    uint64_t fingerprint;     /* content hash, meaningful when fingerprint_kind != NONE */
    uint64_t kernel_seq;      /* successful kernel launches on `device` so far (per process) */
    /* Version 3 (a version 2 record ends here, XP_REC_COPY_V2_SIZE bytes). */
    uint64_t nvtx_range;      /* innermost NVTX push range open on the calling thread, 0 none */
    /* Version 4 (a version 3 record ends here, XP_REC_COPY_V3_SIZE bytes). */
    uint64_t full_fingerprint; /* XXH3-64 of every byte, taken only for a SAMPLED upload whose
                                  sample equals the previous upload's to the same destination
                                  and size (the confirmation of a suspected repeat); 0 none */
    /* Version 7 (a version 4-6 record ends here, XP_REC_COPY_V4_SIZE bytes).  A copy a graph
     * launch ran: c.stack_id is then the stack of the node's capture or add call (where the
     * copy was written), launch_stack_id the launch's, c.start_ns/end_ns the launch call's. */
    uint64_t graph_node;      /* GRAPH_NODE node_id of the node it ran, 0: an ordinary copy */
    uint64_t launch_stack_id; /* XP_REC_STACK id of the launch call, 0 none */
} xp_rec_copy;
#define XP_REC_COPY_V1_SIZE 88u
#define XP_REC_COPY_V2_SIZE 104u
#define XP_REC_COPY_V3_SIZE 112u
#define XP_REC_COPY_V4_SIZE 120u
_Static_assert(offsetof(xp_rec_copy, fingerprint) == XP_REC_COPY_V1_SIZE,
               "a version 1 copy record is the first 88 bytes of a version 2 one");
_Static_assert(offsetof(xp_rec_copy, nvtx_range) == XP_REC_COPY_V2_SIZE,
               "a version 2 copy record is the first 104 bytes of a version 3 one");
_Static_assert(offsetof(xp_rec_copy, full_fingerprint) == XP_REC_COPY_V3_SIZE,
               "a version 3 copy record is the first 112 bytes of a version 4 one");
_Static_assert(offsetof(xp_rec_copy, graph_node) == XP_REC_COPY_V4_SIZE,
               "a version 4 copy record is the first 120 bytes of a version 7 one");
_Static_assert(sizeof(xp_rec_copy) == 136, "copy record is 136 bytes");

/* A memset (cudaMemset*): device memory, or pinned/managed host memory,
 * set to a byte value.  Not a copy: nothing crosses between host and device. */
typedef struct xp_rec_memset {
    xp_call c;
    uint64_t dst;
    uint64_t bytes;
    uint64_t stream;          /* the handle as passed (0 = default stream) */
    uint64_t kernel_seq;      /* as in xp_rec_copy */
    int32_t value;            /* the value passed (only its low byte is written) */
    uint8_t host_mem;         /* xp_host_mem of the target: NONE for device memory */
    uint8_t blocking;         /* xp_blocking */
    uint8_t reserved[2];
    /* Version 3 (a version 2 record ends here, XP_REC_MEMSET_V2_SIZE bytes). */
    uint64_t nvtx_range;      /* as in xp_rec_copy */
    /* Version 7 (a version 3-6 record ends here, XP_REC_MEMSET_V3_SIZE bytes): as in
     * xp_rec_copy, for a memset node a graph launch ran. */
    uint64_t graph_node;
    uint64_t launch_stack_id;
} xp_rec_memset;
#define XP_REC_MEMSET_V2_SIZE 88u
#define XP_REC_MEMSET_V3_SIZE 96u
_Static_assert(offsetof(xp_rec_memset, nvtx_range) == XP_REC_MEMSET_V2_SIZE,
               "a version 2 memset record is the first 88 bytes of a version 3 one");
_Static_assert(offsetof(xp_rec_memset, graph_node) == XP_REC_MEMSET_V3_SIZE,
               "a version 3 memset record is the first 96 bytes of a version 7 one");
_Static_assert(sizeof(xp_rec_memset) == 112, "memset record is 112 bytes");

/* A copy or memset node of a CUDA graph (version 7): issued on a capturing
 * stream (it then did not run) or added to a graph explicitly, or one whose
 * parameters a later call set (the same node_id again: the latest wins).  Each
 * launch of a graph holding it runs it: a COPY or MEMSET record then, with
 * graph_node = node_id.  c is the capture, add or set call (its stack names
 * where the copy was written). */
typedef enum xp_gnode_op {
    XP_GNODE_COPY = 1, XP_GNODE_MEMSET = 2,
} xp_gnode_op;

typedef enum xp_gnode_via {
    XP_GNODE_CAPTURE = 1,     /* a copy or memset call on a capturing stream */
    XP_GNODE_ADD = 2,         /* cudaGraphAddMemcpyNode*, cuGraphAddMemsetNode, ... */
    XP_GNODE_SET = 3,         /* cudaGraphMemcpyNodeSetParams*, ...: new parameters */
} xp_gnode_via;

typedef struct xp_rec_graph_node {
    xp_call c;
    uint64_t node_id;         /* per process, from 1 (never 0) */
    uint64_t graph;           /* the graph's handle as the program saw it */
    uint64_t handle;          /* the node's handle, 0 when not known */
    uint64_t stream;          /* the capturing stream (XP_GNODE_CAPTURE), else 0 */
    uint64_t src, dst, bytes; /* a memset: src 0 */
    int32_t value;            /* a memset's value */
    uint8_t op;               /* xp_gnode_op */
    uint8_t via;              /* xp_gnode_via */
    uint8_t direction;        /* xp_direction (memset: 0) */
    uint8_t host_mem;         /* xp_host_mem of the host side (of the target for a memset) */
    uint8_t kind;             /* the cudaMemcpyKind passed, 255 if none */
    uint8_t reserved[7];
} xp_rec_graph_node;
_Static_assert(sizeof(xp_rec_graph_node) == 120, "graph node record is 120 bytes");

typedef enum xp_alloc_kind {
    XP_ALLOC_DEVICE = 1, XP_ALLOC_PINNED = 2, XP_ALLOC_REGISTERED = 3, XP_ALLOC_MANAGED = 4,
    /* The driver's virtual memory management, which splits an allocation in
     * three: address space (no memory), device memory with no address (ptr
     * is the CUmemGenericAllocationHandle), and the mapping of one into the
     * other (device memory at an address, already counted as PHYSICAL). */
    XP_ALLOC_RESERVED = 5, XP_ALLOC_PHYSICAL = 6, XP_ALLOC_MAPPED = 7,
    /* A CUDA array (cudaMallocArray, cuArrayCreate, ...): device memory with
     * no address, ptr is the array handle (copies name it as their side). */
    XP_ALLOC_ARRAY = 8,
    /* Device memory of another process opened here (cudaIpcOpenMemHandle):
     * memory at an address, but the exporter's, never this process's to
     * free (cudaIpcCloseMemHandle unmaps it). */
    XP_ALLOC_IPC = 9,
} xp_alloc_kind;
/* The highest kind: readers refuse records with a higher one. */
#define XP_ALLOC_KIND_MAX XP_ALLOC_IPC

/* A block of device memory a framework's caching allocator handed out to
 * the program or took back (version 9): PyTorch's, through the report its
 * allocator makes for profilers (hooks/xp_torch_hooks.c).  Not memory taken
 * from CUDA: the blocks lie inside segments the allocator took with
 * cudaMalloc (ALLOC records), so nothing adds them to device memory; they
 * say which line of the program holds what the segments hold.  c is the
 * report's call: status 0, device the block's, stack where the program
 * asked for the tensor. */
typedef enum xp_block_op {
    XP_BLOCK_TAKEN = 1, XP_BLOCK_RETURNED = 2,
} xp_block_op;

typedef enum xp_block_allocator {
    XP_BLOCKS_PYTORCH = 1,    /* c10's CUDA caching allocator */
} xp_block_allocator;

typedef struct xp_rec_block {
    xp_call c;
    uint64_t seq;             /* per process from 1, in the allocator's own order: a block's
                                 address is handed out again at once, so its taking and
                                 return pair by this order, not by times of two threads */
    uint64_t ptr;
    uint64_t bytes;           /* the block's size */
    uint64_t allocated;       /* the allocator's bytes handed out after this event */
    uint64_t reserved_bytes;  /* the allocator's bytes held from CUDA after it */
    uint8_t op;               /* xp_block_op */
    uint8_t allocator;        /* xp_block_allocator */
    uint8_t reserved[6];
} xp_rec_block;
_Static_assert(sizeof(xp_rec_block) == 96, "block record is 96 bytes");

/* A successful or failed allocation.  Failed ones (status != 0) carry the
 * device's free and total memory at that moment when the failure was for
 * lack of memory. */
typedef struct xp_rec_alloc {
    xp_call c;
    uint64_t alloc_id;        /* per-process number of the allocation, from 1 (0 if failed) */
    uint64_t ptr;
    uint64_t bytes;
    uint64_t mem_free;        /* failed for lack of memory: cudaMemGetInfo at that moment */
    uint64_t mem_total;
    uint8_t kind;             /* xp_alloc_kind */
    uint8_t reserved[7];
} xp_rec_alloc;
_Static_assert(sizeof(xp_rec_alloc) == 96, "alloc record is 96 bytes");

/* A free; alloc_id names the allocation it ended (0: the pointer was not a
 * live allocation the preload had seen). */
typedef struct xp_rec_free {
    xp_call c;
    uint64_t alloc_id;
    uint64_t ptr;
    uint8_t kind;             /* xp_alloc_kind of what the API frees */
    uint8_t reserved[7];
} xp_rec_free;
_Static_assert(sizeof(xp_rec_free) == 72, "free record is 72 bytes");

typedef struct xp_rec_sync {
    xp_call c;
    uint64_t stream;          /* stream or event handle; 0 for device-wide */
    /* Version 3 (a version 1 or 2 record ends here, XP_REC_SYNC_V2_SIZE bytes). */
    uint64_t nvtx_range;      /* as in xp_rec_copy */
    /* Version 4 (a version 3 record ends here, XP_REC_SYNC_V3_SIZE bytes).  A successful
     * synchronization of a stream (or of the device) that was the next recorded call on
     * its thread after an asynchronous copy on that stream (or device) completes that
     * copy: together they are one blocking copy in effect (PyTorch's .cpu(), .item(),
     * .to() without non_blocking). */
    uint64_t copy_start_ns;   /* that copy's start_ns (same thread: the pair's key), 0 none */
    uint64_t fingerprint;     /* a device-to-host copy's destination, hashed as the copy
                                 record would (xp_fp_kind) once the sync made it complete */
    uint8_t fingerprint_kind; /* xp_fp_kind; NONE when not D2H or not readable */
    uint8_t reserved[7];
} xp_rec_sync;
#define XP_REC_SYNC_V2_SIZE 56u
#define XP_REC_SYNC_V3_SIZE 64u
_Static_assert(offsetof(xp_rec_sync, nvtx_range) == XP_REC_SYNC_V2_SIZE,
               "a version 2 sync record is the first 56 bytes of a version 3 one");
_Static_assert(offsetof(xp_rec_sync, copy_start_ns) == XP_REC_SYNC_V3_SIZE,
               "a version 3 sync record is the first 64 bytes of a version 4 one");
_Static_assert(sizeof(xp_rec_sync) == 88, "sync record is 88 bytes");

/* A failed call of a hooked API that has no record type of its own. */
typedef struct xp_rec_call {
    xp_call c;
    uint64_t arg0;            /* the first pointer or handle argument, for detail */
} xp_rec_call;
_Static_assert(sizeof(xp_rec_call) == 56, "call record is 56 bytes");

/* A Python frame of a stack (version 4): which code object (the key of its
 * PYCODE record) at which instruction. */
typedef struct xp_pyframe {
    uint64_t code;            /* XP_REC_PYCODE key */
    int32_t offset;           /* byte offset of the instruction in the code's bytecode, -1 unknown */
    uint32_t flags;           /* XP_PYFRAME_* */
} xp_pyframe;
_Static_assert(sizeof(xp_pyframe) == 16, "a Python frame is 16 bytes");
/* The frame is the first one a C call of the interpreter's eval loop ran
 * (the outermost of the frames that call runs): the analyzer puts the frames
 * from one such frame inward in place of one native eval-loop frame. */
#define XP_PYFRAME_ENTRY 1u
#define XP_PY_MAX_FRAMES 128

typedef struct xp_rec_stack {
    xp_rec_header h;
    uint64_t stack_id;        /* XXH3-64 of the frames (never 0) */
    uint32_t depth;
    uint32_t py_depth;        /* Python frames after the native ones (version 4; before, 0) */
    /* uint64_t frames[depth]: raw return addresses, innermost first;
     * xp_pyframe py[py_depth]: the calling thread's Python frames, innermost first */
} xp_rec_stack;
_Static_assert(sizeof(xp_rec_stack) == 32, "stack record header is 32 bytes");

/* A Python code object as the analyzer needs it to name a frame: its file,
 * qualified name, first line and line table (decoded offline: lines_kind
 * says which of CPython's formats it is, src/xp_pylayout.h). */
typedef struct xp_rec_pycode {
    xp_rec_header h;
    uint64_t key;             /* what xp_pyframe.code says (never 0) */
    int32_t first_line;       /* co_firstlineno */
    uint8_t py_major, py_minor;
    uint8_t lines_kind;       /* enum xp_py_lines */
    uint8_t reserved;
    uint32_t file_len, name_len, table_len; /* bytes, without NULs */
    uint32_t reserved2;
    /* char file[file_len + 1]; char name[name_len + 1]; uint8_t table[table_len] */
} xp_rec_pycode;
_Static_assert(sizeof(xp_rec_pycode) == 48, "pycode record header is 48 bytes");
#define XP_PY_STR_MAX 4096u       /* longest file or name kept, in bytes of UTF-8 */
#define XP_PY_TABLE_MAX 65536u    /* a longer line table is not kept (lines then unknown) */

typedef struct xp_rec_module {
    xp_rec_header h;
    uint64_t base;            /* load bias (dlpi_addr) */
    uint64_t size;            /* extent of its PT_LOAD segments */
    uint64_t low;             /* lowest mapped address (base + first PT_LOAD vaddr) */
    uint16_t build_id_len;    /* 0 if none */
    uint16_t path_len;        /* bytes of path, without the NUL */
    uint32_t reserved;
    uint8_t build_id[32];
    /* char path[path_len + 1] */
} xp_rec_module;
_Static_assert(sizeof(xp_rec_module) == 80, "module record header is 80 bytes");

typedef struct xp_rec_meta {
    xp_rec_header h;
    uint16_t key_len;
    uint16_t reserved;
    uint32_t value_len;
    /* char key[key_len + 1]; char value[value_len + 1] */
} xp_rec_meta;
_Static_assert(sizeof(xp_rec_meta) == 24, "meta record header is 24 bytes");

/* NVTX ranges (hooks/xp_nvtx_hooks.c, src/xp_nvtx.c).  Range ids are the
 * process's own numbers from 1, shared by push/pop and start/end ranges (a
 * start returns its id to the program, which NVTX wants unique and nonzero).
 * Names and domain names are interned: a NAME record per distinct string,
 * keyed by its XXH3-64 hash, which NVTX records then carry. */
typedef enum xp_nvtx_op {
    XP_NVTX_PUSH = 1,         /* nvtx[Domain]RangePush*: opens range_id on this thread */
    XP_NVTX_POP = 2,          /* nvtx[Domain]RangePop: closes range_id (this thread's) */
    XP_NVTX_START = 3,        /* nvtx[Domain]RangeStart*: opens range_id, not thread-bound */
    XP_NVTX_END = 4,          /* nvtx[Domain]RangeEnd: closes range_id, from any thread */
} xp_nvtx_op;

/* Names longer than this many bytes are cut (at a UTF-8 character boundary)
 * before they are hashed and stored. */
#define XP_NVTX_NAME_MAX 512u

typedef struct xp_rec_nvtx {
    xp_rec_header h;          /* tid: the thread that made the call */
    uint64_t time_ns;         /* CLOCK_MONOTONIC at the call, as copies' start_ns */
    uint64_t range_id;        /* the range opened or closed, never 0 */
    uint64_t parent_id;       /* PUSH: the innermost push range open on the thread before it, 0 none */
    uint64_t name;            /* PUSH/START: NAME hash of the message, 0 none */
    uint64_t domain;          /* NAME hash of the domain's name, 0 the default domain */
    int32_t depth;            /* PUSH/POP: the level NVTX returned (0-based, per domain) */
    uint8_t op;               /* xp_nvtx_op */
    uint8_t reserved[3];
} xp_rec_nvtx;
_Static_assert(sizeof(xp_rec_nvtx) == 64, "nvtx record is 64 bytes");

typedef struct xp_rec_name {
    xp_rec_header h;
    uint64_t hash;            /* XXH3-64 of the len bytes (never 0) */
    uint32_t len;             /* bytes, without the NUL; at most XP_NVTX_NAME_MAX */
    uint32_t reserved;
    /* char name[len + 1] */
} xp_rec_name;
_Static_assert(sizeof(xp_rec_name) == 32, "name record header is 32 bytes");

static inline uint32_t xp_record_size(size_t payload)
{
    return (uint32_t)((payload + 7u) & ~(size_t)7u);
}

#endif
