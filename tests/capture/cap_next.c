/* cap_next.c: a preload-like library (libcap_next.so, linked by cap_next_main
 * after libcap_next_early.so and before libcap_next_later.so; built a second
 * time as libcap_next_dl.so, which the program dlopen()s) that finds the
 * functions it wraps with dlsym(RTLD_NEXT, ...), as interposers do.  glibc
 * searches the objects after the caller, so this only works under xferprof
 * if xferprof's dlsym keeps the caller's identity: a forwarding wrapper would
 * search after libxferprof instead, find libcap_next_early's cap_which, and
 * find this library's own getppid (endless recursion). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PREFIX
#define CAP_PREFIX cap_next
#endif
#define CAP_CAT2(a, b) a##_##b
#define CAP_CAT(a, b) CAP_CAT2(a, b)
#define CAP_FN(name) CAP_CAT(CAP_PREFIX, name)

#define CAP_API __attribute__((visibility("default")))

int cap_later_only(void);
CAP_API const char *CAP_FN(which)(void);
CAP_API void CAP_FN(probe)(const char *tag);


/* Interposes libc's getppid (the linked library only: the dlopen()ed copy
 * comes after libc in the search order and would never be called). */
#ifndef CAP_NO_WRAP
static unsigned wrapped_calls;

CAP_API pid_t getppid(void);
CAP_API pid_t getppid(void)
{
    static pid_t (*next)(void);
    if (next == NULL) {
        void *p = dlsym(RTLD_NEXT, "getppid");
        memcpy(&next, &p, sizeof p);
        if (next == NULL || next == getppid) {
            fprintf(stderr, "cap_next: RTLD_NEXT getppid found %s\n", next ? "itself" : "nothing");
            _exit(3);
        }
    }
    wrapped_calls++;
    return next();
}
#endif

/* The first cap_which after this library. */
const char *CAP_FN(which)(void)
{
    const char *(*f)(void) = NULL;
    void *p = dlsym(RTLD_NEXT, "cap_which");
    memcpy(&f, &p, sizeof p);
    return f ? f() : "none";
}

/* Prints what RTLD_NEXT lookups made from this library find. */
void CAP_FN(probe)(const char *tag)
{
    void *p = dlsym(RTLD_NEXT, "getpid");
    pid_t (*gp)(void) = NULL;
    memcpy(&gp, &p, sizeof p);
    printf("%s getpid %s\n", tag, gp && gp() == (pid_t)syscall(SYS_getpid) ? "ok" : "wrong");
    p = dlsym(RTLD_NEXT, "strlen");
    size_t (*sl)(const char *) = NULL;
    memcpy(&sl, &p, sizeof p);
    printf("%s strlen %s\n", tag, sl && sl("four") == 4 ? "ok" : "wrong");
    p = dlsym(RTLD_NEXT, "cap_later_only");
    int (*lo)(void) = NULL;
    memcpy(&lo, &p, sizeof p);
    printf("%s cap_later_only %d (direct %d)\n", tag, lo ? lo() : -1, cap_later_only());
    dlerror();
    p = dlsym(RTLD_NEXT, "cap_no_such_function");
    const char *err = dlerror();
    printf("%s missing %s, error %s\n", tag, p ? "found" : "NULL", err ? "set" : "unset");
#if defined(__x86_64__)
    p = dlvsym(RTLD_NEXT, "getpid", "GLIBC_2.2.5");
    memcpy(&gp, &p, sizeof p);
    printf("%s dlvsym getpid %s\n", tag, gp && gp() == (pid_t)syscall(SYS_getpid) ? "ok" : "wrong");
#else
    printf("%s dlvsym getpid ok\n", tag);
#endif
    printf("%s which %s\n", tag, CAP_FN(which)());
#ifndef CAP_NO_WRAP
    unsigned before = wrapped_calls;
    pid_t pp = getppid();
    printf("%s getppid %s, wrapped %u\n", tag, pp == (pid_t)syscall(SYS_getppid) ? "ok" : "wrong",
           wrapped_calls - before);
#endif
}
