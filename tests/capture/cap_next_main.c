/* cap_next_main.c: RTLD_NEXT lookups made by the program's own libraries
 * (cap_next.c) still find what they find without xferprof: from a linked
 * library (after libcap_next_early.so, which defines the same cap_which),
 * from a dlopen()ed one, and from the program itself. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *cap_which(void);
int cap_early_id(void);
int cap_later_only(void);
const char *cap_next_which(void);
void cap_next_probe(const char *tag);

int main(int argc, char **argv)
{
    /* The program's own references: the first definitions, and through the
     * interposed getppid. */
    printf("main which %s, early %d, later %d\n", cap_which(), cap_early_id(), cap_later_only());
    cap_next_probe("linked");
    printf("main getppid %s\n", getppid() == getppid() ? "ok" : "wrong");

    /* By path: a sanitizer's dlopen interceptor would search its own
     * RUNPATH, not the program's. */
    void *h = dlopen(argc > 1 ? argv[1] : "libcap_next_dl.so", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    void (*probe)(const char *) = NULL;
    void *p = dlsym(h, "cap_next_dl_probe");
    memcpy(&probe, &p, sizeof p);
    if (probe == NULL) {
        printf("no cap_next_dl_probe\n");
        return 1;
    }
    probe("dlopened");
    p = dlsym(RTLD_NEXT, "cap_which");
    const char *(*w)(void) = NULL;
    memcpy(&w, &p, sizeof p);
    printf("main RTLD_NEXT which %s\n", w ? w() : "none");
    dlclose(h);
    return 0;
}
