/* xp_config.h: the preload's settings, from XFERPROF_* environment variables
 * (which `xferprof run` sets from its options). */
#ifndef XP_CONFIG_H
#define XP_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define XP_DEFAULT_OUTPUT "xferprof-%h-%p.db"
#define XP_DEFAULT_STACK_DEPTH 32

/* XFERPROF_FINGERPRINT: how copies' contents are hashed. */
typedef enum xp_fp_mode {
    XP_FP_MODE_OFF = 0,       /* no fingerprints */
    XP_FP_MODE_SAMPLED = 1,   /* exact up to XP_FP_THRESHOLD bytes, sampled above (default) */
    XP_FP_MODE_FULL = 2,      /* every byte of every copy */
} xp_fp_mode;
#define XP_DEFAULT_FINGERPRINT XP_FP_MODE_SAMPLED
/* The journal's blocks on disk a running ingest lets records reach before a
 * writer waits for it: issue 15's bound. */
#define XP_DEFAULT_JOURNAL_MAX (UINT64_C(64) << 20)

/* XFERPROF_CAPTURE_RANGE: what opens the capture window (docs/schema.md,
 * "Capture window"); none: the whole run, or the time XFERPROF_DELAY and
 * XFERPROF_DURATION give. */
typedef enum xp_capture {
    XP_CAPTURE_NONE = 0,
    XP_CAPTURE_PROFILER = 1,  /* "cudaProfilerApi": between cu/cudaProfilerStart and Stop */
    XP_CAPTURE_NVTX = 2,      /* "nvtx": while an NVTX range named XFERPROF_NVTX_CAPTURE is open */
} xp_capture;

/* The longest NVTX domain or range name a capture setting may give (the
 * recorded names are cut at XP_NVTX_NAME_MAX too). */
#define XP_CAPTURE_NAME_MAX 512

typedef struct xp_config {
    char output[PATH_MAX];    /* XFERPROF_OUTPUT: pattern (default XP_DEFAULT_OUTPUT) */
    int stack_depth;          /* XFERPROF_STACK_DEPTH: 0 = no stacks, at most XP_MAX_FRAMES */
    bool quiet;               /* XFERPROF_QUIET: no warnings from the preload */
    xp_fp_mode fingerprint;   /* XFERPROF_FINGERPRINT: off, sampled (default) or full */
    char manifest[PATH_MAX];  /* XFERPROF_MANIFEST: file `xferprof run` reads back
                                 ("" when not run by it) */
    /* The capture window; all zero (and window false) when none is set. */
    bool window;              /* any of the four settings below is set */
    xp_capture capture;       /* XFERPROF_CAPTURE_RANGE */
    char nvtx_name[XP_CAPTURE_NAME_MAX + 1];   /* XFERPROF_NVTX_CAPTURE: NAME[@DOMAIN] */
    char nvtx_domain[XP_CAPTURE_NAME_MAX + 1]; /* "" the default domain */
    bool nvtx_any_domain;     /* NAME@*: a range of that name in any domain */
    uint64_t delay_ns;        /* XFERPROF_DELAY: opens no earlier than this after start */
    uint64_t duration_ns;     /* XFERPROF_DURATION: each window closes after this; 0 none */
    bool clock_monotonic;     /* XFERPROF_CLOCK=monotonic: records never read the TSC */
    uint64_t journal_max;     /* XFERPROF_JOURNAL_MAX_MIB, in bytes: the journal's blocks on
                                 disk while the ingest runs (xp_journal_set_backlog); 0 none */
} xp_config;

/* Fills c from the environment.  Returns 0, or -1 with a one-line reason in
 * err for a malformed value (c then holds the defaults for it). */
int xp_config_load(xp_config *c, char *err, size_t errlen);

/* Parses a stack depth: decimal digits only, 0 to XP_MAX_FRAMES.  Returns 0
 * (with *out set) or -1.  The launcher checks --stack-depth with it, so the
 * option and the variable accept the same values. */
int xp_config_parse_depth(const char *s, int *out);

/* Parses a fingerprint setting: "off", "sampled" or "full", exactly.
 * Returns 0 (with *out set) or -1.  Shared with the launcher's
 * --fingerprint, like xp_config_parse_depth. */
int xp_config_parse_fingerprint(const char *s, xp_fp_mode *out);

/* Parses a capture range: "none", "cudaProfilerApi" or "nvtx", exactly
 * (nsys's words).  Returns 0 (with *out set) or -1. */
int xp_config_parse_capture(const char *s, xp_capture *out);

/* "none", "cudaProfilerApi" or "nvtx". */
const char *xp_config_capture_name(xp_capture c);

/* Parses seconds for XFERPROF_DELAY / XFERPROF_DURATION: decimal digits
 * with an optional fraction ("2", "0.25"), at most 10^6 s.  Returns 0 (with
 * *ns set) or -1. */
int xp_config_parse_seconds(const char *s, uint64_t *ns);

/* Splits an NVTX capture setting NAME, NAME@DOMAIN or NAME@* at its last
 * '@' into c->nvtx_name, c->nvtx_domain and c->nvtx_any_domain.  Returns 0
 * or -1 (an empty NAME or DOMAIN, or one longer than XP_CAPTURE_NAME_MAX). */
int xp_config_parse_nvtx_capture(const char *s, xp_config *c);

/* "off", "sampled" or "full". */
const char *xp_config_fingerprint_name(xp_fp_mode m);

/* The rank of this process from RANK, LOCAL_RANK, OMPI_COMM_WORLD_RANK or
 * SLURM_PROCID (first set wins), or NULL. */
const char *xp_config_rank(void);

/* The rank of this process among those of its machine, from LOCAL_RANK,
 * OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID or MPI_LOCALRANKID (first set
 * wins), or NULL. */
const char *xp_config_local_rank(void);

/* Expands %p (pid), %h (host name), %r (rank, "0" when none is set),
 * %t (start time, local, YYYYmmdd-HHMMSS) and %% in pattern.  Returns 0, or
 * -1 if the result does not fit or the pattern has an unknown %-sequence. */
int xp_expand_output(const char *pattern, pid_t pid, const char *host, const char *rank,
                     int64_t start_wall_s, char *out, size_t outlen);

/* What sits at a path, by its st_mode, for a message refusing it as an
 * output ("a FIFO", "a character device", ...). */
const char *xp_file_kind(mode_t m);

#endif
