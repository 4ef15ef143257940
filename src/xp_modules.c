/* xp_modules.c: dl_iterate_phdr into MODULE records, each object once. */
#include "xp_modules.h"
#include "xp_python.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

/* Identities (hash of path and bias) already written; guarded by lock.  A
 * full table only means an object is written again (ingest dedups). */
#define KNOWN_MAX 4096
static uint64_t known[KNOWN_MAX];
static size_t known_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static bool is_known(uint64_t key)
{
    for (size_t i = 0; i < known_count; i++)
        if (known[i] == key)
            return true;
    if (known_count < KNOWN_MAX)
        known[known_count++] = key;
    return false;
}

static size_t build_id(const struct dl_phdr_info *info, uint8_t out[32])
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
        const char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            const char *desc = name + ((n->n_namesz + 3) & ~3u);
            if (desc + n->n_descsz > end)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
                size_t len = n->n_descsz > 32 ? 32 : n->n_descsz;
                memcpy(out, desc, len);
                return len;
            }
            p = desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

struct scan {
    xp_journal *journal;
    bool first;               /* the next object visited is the first */
};

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    xp_journal *j = ((struct scan *)data)->journal;
    char exe[4096];
    const char *path = info->dlpi_name;
    if (path == NULL || path[0] == '\0') {
        /* The loader lists the main program first, with no name. */
        bool *first = &((struct scan *)data)->first;
        if (!*first)
            return 0;
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = '\0';
        path = exe;
    }
    ((struct scan *)data)->first = false;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (hi == 0)
        return 0;
    size_t plen = strlen(path);
    if (plen > 4000)
        return 0;
    uint64_t key = XXH3_64bits_withSeed(path, plen, (uint64_t)info->dlpi_addr);
    if (is_known(key))
        return 0;
    uint32_t rsize = xp_record_size(sizeof(xp_rec_module) + plen + 1);
    xp_rec_module *r = xp_journal_reserve(j, rsize);
    if (r == NULL)
        return 0;
    r->h.type = XP_REC_MODULE;
    r->h.size = rsize;
    r->h.tid = (uint32_t)syscall(SYS_gettid);
    r->base = info->dlpi_addr;
    r->low = lo;
    r->size = hi - lo;
    r->build_id_len = (uint16_t)build_id(info, r->build_id);
    r->path_len = (uint16_t)plen;
    memcpy(r + 1, path, plen + 1);
    xp_journal_commit(r);
    return 0;
}

void xp_modules_scan(xp_journal *j)
{
    struct scan scan = {.journal = j, .first = true};
    pthread_mutex_lock(&lock);
    dl_iterate_phdr(visit, &scan);
    pthread_mutex_unlock(&lock);
    /* A libpython may be among the objects loaded since the last scan. */
    xp_python_scan(j);
}

void xp_modules_reset(void)
{
    pthread_mutex_lock(&lock);
    known_count = 0;
    pthread_mutex_unlock(&lock);
    xp_python_reset();
}
