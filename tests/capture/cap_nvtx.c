/* cap_nvtx.c: NVTX ranges (NVTX3's header-only API) around known copies, for
 * test_nvtx.py.  Two threads at once push "step 0".."step 2", each holding a
 * "forward"; copies inside and outside them; a start/end range started on
 * the main thread and ended on the worker; a domain range, a registered
 * string, a wide string, a name longer than xferprof keeps, a NULL message,
 * a message of unknown type, an unbalanced pop, a range left open at exit.
 *
 * Every copy has its own size.  With a results file (argv[1]) the program
 * writes there what it did, for the driver to check the database against:
 *   copy TID BYTES PATH   PATH: the push ranges open on the thread, outermost
 *                         first, joined by '|' ('-' none; '~' a range without
 *                         a name)
 *   ret WHAT GOT WANT     a push/pop return value, and NVTX's specified value
 *                         (the level) as this program counts it
 *   start NAME ID TID     a start/end range's id, and the thread that started it
 *   end ID TID            ... and that ended it
 * stdout carries only what does not depend on a tool being attached (NVTX
 * without one returns -2 from push and pop), so it is the same with and
 * without xferprof. */
#include "cap_util.h"

#include <pthread.h>
#include <stdarg.h>
#include <wchar.h>


#include <nvtx3/nvToolsExt.h>

static FILE *results;
static pthread_mutex_t results_lock = PTHREAD_MUTEX_INITIALIZER;
static void *dev;
static unsigned char *host;   /* a 64 KiB half per thread (index 0, 1) */
/* This thread's half: two threads copying in and out of one host buffer
 * would race on it (an upload reading what a download writes). */
static __thread unsigned char *my_host;

/* The program's own view of a thread's open push ranges. */
typedef struct {
    const char *name[16];
    int n;
    long tid;
} path_t;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    if (results == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&results_lock);
    vfprintf(results, fmt, ap);
    pthread_mutex_unlock(&results_lock);
    va_end(ap);
}

/* A copy of `bytes` (unique per copy), noted with the path it ran in. */
static void copy(const path_t *p, size_t bytes, bool up)
{
    if (up)
        CHECK_OK(cudaMemcpy(dev, my_host, bytes, cudaMemcpyHostToDevice));
    else
        CHECK_OK(cudaMemcpy(my_host, dev, bytes, cudaMemcpyDeviceToHost));
    char buf[4096] = "-";
    size_t off = 0;
    for (int i = 0; i < p->n; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? "|" : "",
                                p->name[i] ? p->name[i] : "~");
    note("copy %ld %zu %s\n", p->tid, bytes, buf);
}

/* Push: ret is what NVTX returned, and the level it specifies (this
 * program's count of open ranges in that domain). */
static void pushed(path_t *p, const char *name, int ret, int level)
{
    note("ret push %d %d\n", ret, level);
    p->name[p->n++] = name;
}

static void popped(path_t *p, int ret, int level)
{
    note("ret pop %d %d\n", ret, level);
    p->n--;
}

typedef struct {
    int index;
    nvtxRangeId_t to_end;     /* a range another thread started, for this one to end */
    pthread_barrier_t *go;
} worker_arg;

static char step_names[2][3][16];

/* Thread t's sizes: 10000 * (t + 1) + a distinct small number. */
static void steps(int t, pthread_barrier_t *go, nvtxRangeId_t to_end)
{
    path_t p = {.tid = cap_tid()};
    my_host = host + ((size_t)t << 16);
    size_t base = 10000u * (size_t)(t + 1);
    pthread_barrier_wait(go);
    copy(&p, base + 1, true);
    for (int s = 0; s < 3; s++) {
        /* The name in a buffer the program reuses: xferprof must copy it. */
        char name[16];
        snprintf(name, sizeof name, "step %d", s);
        snprintf(step_names[t][s], sizeof step_names[t][s], "%s", name);
        pushed(&p, step_names[t][s], nvtxRangePushA(name), 0);
        memset(name, 0, sizeof name);
        copy(&p, base + 10 + 10u * (size_t)s, true);
        pushed(&p, "forward", nvtxRangePushA("forward"), 1);
        copy(&p, base + 11 + 10u * (size_t)s, true);
        if (t == 0 && s == 1)
            usleep(300 * 1000);   /* the background ingest stores the push before the pop */
        copy(&p, base + 12 + 10u * (size_t)s, false);
        popped(&p, nvtxRangePop(), 1);
        copy(&p, base + 13 + 10u * (size_t)s, false);
        if (t == 1 && s == 0) {
            nvtxRangeEnd(to_end);
            note("end %llu %ld\n", (unsigned long long)to_end, p.tid);
        }
        popped(&p, nvtxRangePop(), 0);
    }
    copy(&p, base + 2, false);
}

static void *worker(void *a)
{
    worker_arg *w = a;
    steps(w->index, w->go, w->to_end);
    return NULL;
}

static nvtxEventAttributes_t attr_ascii(const char *m)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = m;
    return a;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        CHECK((results = fopen(argv[1], "w")) != NULL);
    host = calloc(2, 1u << 16);
    CHECK(host);
    CHECK_OK(cudaMalloc(&dev, 1u << 16));
    path_t p = {.tid = cap_tid()};

    /* Started here, ended by the worker: not thread-bound. */
    nvtxRangeId_t load = nvtxRangeStartA("load");
    note("start load %llu %ld\n", (unsigned long long)load, p.tid);
    pthread_barrier_t go;
    CHECK(pthread_barrier_init(&go, NULL, 2) == 0);
    worker_arg w = {.index = 1, .to_end = load, .go = &go};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, worker, &w) == 0);
    steps(0, &go, 0);
    CHECK(pthread_join(th, NULL) == 0);

    /* A domain range, around a memset and a sync, with a registered name
     * pushed inside it in the same domain. */
    nvtxDomainHandle_t dom = nvtxDomainCreateA("xpdomain");
    nvtxEventAttributes_t a = attr_ascii("dom push");
    pushed(&p, "dom push", nvtxDomainRangePushEx(dom, &a), 0);
    copy(&p, 101, true);
    CHECK_OK(cudaMemset(dev, 1, 1000));
    note("memset %ld 1000 dom push\n", p.tid);
    CHECK_OK(cudaDeviceSynchronize());
    note("sync %ld dom push\n", p.tid);
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered name");
    nvtxEventAttributes_t r = attr_ascii(NULL);
    r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    r.message.registered = reg;
    pushed(&p, "registered name", nvtxDomainRangePushEx(dom, &r), 1);
    copy(&p, 102, false);
    /* A range of the default domain inside: its level is 0 (levels are per domain). */
    pushed(&p, "plain in dom", nvtxRangePushA("plain in dom"), 0);
    copy(&p, 103, true);
    popped(&p, nvtxRangePop(), 0);
    popped(&p, nvtxDomainRangePop(dom), 1);
    popped(&p, nvtxDomainRangePop(dom), 0);
    nvtxEventAttributes_t ds = attr_ascii("dom startend");
    nvtxRangeId_t dsid = nvtxDomainRangeStartEx(dom, &ds);
    note("start dom_startend %llu %ld\n", (unsigned long long)dsid, p.tid);
    copy(&p, 104, true);
    nvtxDomainRangeEnd(dom, dsid);
    note("end %llu %ld\n", (unsigned long long)dsid, p.tid);

    /* Names: wide, too long, none, of unknown type. */
    pushed(&p, "wide \xc3\xa9t\xc3\xa9 \xe2\x82\xac", nvtxRangePushW(L"wide \u00e9t\u00e9 \u20ac"), 0);
    copy(&p, 201, true);
    static char longname[1001];
    memset(longname, 'x', 1000);
    pushed(&p, longname, nvtxRangePushA(longname), 1);
    copy(&p, 202, true);
    pushed(&p, NULL, nvtxRangePushA(NULL), 2);
    copy(&p, 203, true);
    nvtxEventAttributes_t odd = attr_ascii("never read");
    odd.messageType = 99;
    pushed(&p, NULL, nvtxRangePushEx(&odd), 3);
    copy(&p, 204, false);
    popped(&p, nvtxRangePop(), 3);
    popped(&p, nvtxRangePop(), 2);
    popped(&p, nvtxRangePop(), 1);
    popped(&p, nvtxRangePop(), 0);

    /* Nothing open: an error (a negative value from a tool). */
    note("ret unbalanced_pop %d -1\n", nvtxRangePop());

    /* A start/end range on this thread: not what copies are attributed to. */
    nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
    note("start epoch %llu %ld\n", (unsigned long long)epoch, p.tid);
    copy(&p, 301, true);
    nvtxRangeEnd(epoch);
    note("end %llu %ld\n", (unsigned long long)epoch, p.tid);

    /* Left open at exit. */
    pushed(&p, "unclosed", nvtxRangePushA("unclosed"), 0);
    copy(&p, 401, true);
    if (results)
        fclose(results);
    CHECK_OK(cudaFree(dev));
    free(host);
    printf("nvtx scenario done\n");
    return 0;
}
