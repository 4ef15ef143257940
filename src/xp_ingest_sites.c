/* xp_ingest_sites.c: call_sites ids for the ingest, from an in-memory mirror of the
 * table: a known site costs no query, and a new one no SELECT that finds nothing. */
#include "xp_ingest_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Why a mirror rather than a cache.  With thousands of distinct sites (every
 * Python line that moves a tensor, times its stacks and threads) a cache
 * misses, and a new site cost a SELECT that found nothing before its INSERT:
 * make_db -n 200000 (6,652 sites) spent 1,330 instructions per record here.
 * While the mirror holds every row of call_sites (sites_all), a site it does
 * not hold is not in the database, and is inserted at once.
 *
 * What else writes call_sites: an earlier pass of this handle (its rows are
 * in the mirror); an earlier process or handle on the same journal (the
 * profiled process's background passes, then `xferprof recover`; a recovery
 * of a database a recovery already fed; a recovery run beside the live
 * process); nothing else: a database is fed by one journal only (the
 * journal table refuses another; a forked child writes its own database).
 * So the mirror is compared with the database once per connection, inside
 * the first transaction that needs it (BEGIN IMMEDIATE: no other writer until
 * it ends, and xp_ig_begin refuses a later transaction of the connection if
 * another one committed in between): max(id) unchanged means no row was
 * added by anyone else, since rows of call_sites are never deleted or
 * updated and a new rowid is above every other.  Otherwise the mirror is
 * loaded from the table.  A rollback drops the rows it added, so the mirror
 * is loaded again after one.
 *
 * Bounded: past XP_SITE_SLOTS_MAX slots the mirror holds only the sites it
 * has and is a cache; a site it lacks is then looked up with a SELECT, as
 * every site was before.
 */

static void xp_bind_site(sqlite3_stmt *s, const site_key *k)
{
    sqlite3_bind_int(s, 1, k->api);
    sqlite3_bind_int(s, 2, k->status);
    sqlite3_bind_int(s, 3, k->device);
    sqlite3_bind_int64(s, 4, k->tid);
    sqlite3_bind_int64(s, 5, k->stream);
    xp_ig_bind_stack(s, 6, k->stack);
    sqlite3_bind_int(s, 7, k->direction);
    sqlite3_bind_int(s, 8, k->host_mem);
    sqlite3_bind_int(s, 9, k->blocking);
    sqlite3_bind_int(s, 10, k->kind);
}

/* Word i of a key (keys are zero-filled, padding included, so that equal
 * keys have equal words). */
_Static_assert(sizeof(site_key) == 40, "a site key is five 64-bit words");
static inline uint64_t xp_key_word(const site_key *k, unsigned i)
{
    uint64_t w;
    memcpy(&w, (const unsigned char *)k + 8 * i, sizeof w);
    return w;
}

/* The slot holding k, or the empty slot where it would go (the table is
 * never full: at most 3/4 of its slots are used).  The hash multiplies each
 * of the key's words by its own odd constant, and folds the high bits,
 * which every field reaches, down to the slot index.  Keys are compared word
 * by word: memcmp's call cost a third of a lookup. */
static inline site_slot *xp_site_slot(site_slot *tab, uint32_t slots, const site_key *k)
{
    uint64_t w0 = xp_key_word(k, 0), w1 = xp_key_word(k, 1), w2 = xp_key_word(k, 2),
             w3 = xp_key_word(k, 3), w4 = xp_key_word(k, 4);
    uint64_t h = w0 * 0x9e3779b97f4a7c15ull ^ w1 * 0xc2b2ae3d27d4eb4full ^
                 w2 * 0x165667b19e3779f9ull ^ w3 * 0xd6e8feb86659fd93ull ^
                 w4 * 0xff51afd7ed558ccdull;
    uint32_t mask = slots - 1;
    for (uint32_t i = (uint32_t)(h ^ (h >> 32) ^ (h >> 47)) & mask;; i = (i + 1) & mask) {
        const site_key *t = &tab[i].key;
        if (tab[i].id == 0 ||
            ((xp_key_word(t, 0) ^ w0) | (xp_key_word(t, 1) ^ w1) | (xp_key_word(t, 2) ^ w2) |
             (xp_key_word(t, 3) ^ w3) | (xp_key_word(t, 4) ^ w4)) == 0)
            return &tab[i];
    }
}

/* Makes room for one more site: the table allocated, or doubled once 3/4
 * full.  False when it is at its bound (or memory is short). */
static bool xp_sites_room(xp_ingest *ig)
{
    if (ig->sites != NULL && (ig->site_count + 1) * 4u <= ig->site_slots * 3u)
        return true;
    uint32_t slots = ig->sites == NULL ? XP_SITE_SLOTS_MIN : ig->site_slots * 2;
    if (slots > XP_SITE_SLOTS_MAX)
        return false;
    site_slot *tab = calloc(slots, sizeof *tab);
    if (tab == NULL)
        return false;
    for (uint32_t i = 0; ig->sites != NULL && i < ig->site_slots; i++)
        if (ig->sites[i].id != 0)
            *xp_site_slot(tab, slots, &ig->sites[i].key) = ig->sites[i];
    free(ig->sites);
    ig->sites = tab;
    ig->site_slots = slots;
    return true;
}

/* Adds k = id to the mirror (the first id stays if k is there already: a
 * SELECT finds the lowest).  False when there is no room for it. */
static bool xp_sites_put(xp_ingest *ig, const site_key *k, int64_t id)
{
    if (!xp_sites_room(ig))
        return false;
    site_slot *s = xp_site_slot(ig->sites, ig->site_slots, k);
    if (s->id == 0) {
        s->key = *k;
        s->id = id;
        ig->site_count++;
    }
    return true;
}

/* Column i of a call_sites row if it is an integer within [lo, hi]. */
static bool xp_col_in(sqlite3_stmt *s, int i, sqlite3_int64 lo, sqlite3_int64 hi,
                      sqlite3_int64 *v)
{
    if (sqlite3_column_type(s, i) != SQLITE_INTEGER)
        return false;
    *v = sqlite3_column_int64(s, i);
    return *v >= lo && *v <= hi;
}

/* The key of the current row of S_SITE_ALL into k (OUT), if the ingest could
 * have written it: a row it could not have (no lookup of ours would find it
 * by its values) is left to the SELECT. */
static bool xp_site_row(sqlite3_stmt *s, site_key *k)
{
    sqlite3_int64 v[11];
    static const sqlite3_int64 lo[11] = {1, INT32_MIN, INT32_MIN, INT32_MIN, 0, INT64_MIN, 1,
                                         0, 0, 0, 0};
    static const sqlite3_int64 hi[11] = {INT64_MAX, INT32_MAX, INT32_MAX, INT32_MAX, UINT32_MAX,
                                         INT64_MAX, INT64_MAX, 255, 255, 255, 255};
    for (int i = 0; i < 11; i++) {
        if (i == 6 && sqlite3_column_type(s, i) == SQLITE_NULL)
            v[i] = 0;   /* no stack */
        else if (!xp_col_in(s, i, lo[i], hi[i], &v[i]))
            return false;
    }
    memset(k, 0, sizeof *k);   /* padding too: keys are compared word by word */
    k->api = (int32_t)v[1];
    k->status = (int32_t)v[2];
    k->device = (int32_t)v[3];
    k->tid = (uint32_t)v[4];
    k->stream = v[5];
    k->stack = v[6];
    k->direction = (uint8_t)v[7];
    k->host_mem = (uint8_t)v[8];
    k->blocking = (uint8_t)v[9];
    k->kind = (uint8_t)v[10];
    return true;
}

/* Loads the mirror from call_sites, whose max(id) is max.  0 or -1. */
static int xp_sites_load(xp_ingest *ig, int64_t max)
{
    if (ig->site_count > 0)
        memset(ig->sites, 0, (size_t)ig->site_slots * sizeof *ig->sites);
    ig->site_count = 0;
    ig->sites_all = true;
    sqlite3_stmt *s = ig->st[S_SITE_ALL];
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        site_key k;
        if (!xp_site_row(s, &k)) {
            ig->sites_all = false;
        } else if (!xp_sites_put(ig, &k, sqlite3_column_int64(s, 0))) {
            ig->sites_all = false;
            break;   /* full: the rest are looked up when met */
        }
    }
    sqlite3_reset(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        xp_ig_sites_forget(ig);
        return xp_ig_db_fail(ig);
    }
    ig->sites_max = max;
    return 0;
}

/* Compares the mirror with the database (once per connection, inside a
 * transaction), loading it if anyone else added sites.  0 or -1. */
static int xp_sites_check(xp_ingest *ig)
{
    sqlite3_stmt *s = ig->st[S_SITE_MAX];
    int rc = sqlite3_step(s);
    int64_t max = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    if (rc != SQLITE_ROW)
        return xp_ig_db_fail(ig);
    if (max != ig->sites_max && xp_sites_load(ig, max) != 0)
        return -1;
    ig->sites_checked = true;
    return 0;
}

/* A site the mirror does not hold (or the first of a connection).  A
 * function of its own so that a hit does not pay for saving the registers
 * this path needs. */
static __attribute__((noinline)) sqlite3_int64 xp_site_miss(xp_ingest *ig, const site_key *k)
{
    if (!ig->sites_checked) {
        if (xp_sites_check(ig) != 0)
            return -1;
        return xp_ig_site_ref(ig, k);
    }
    sqlite3_int64 id = 0;
    if (!ig->sites_all) {
        sqlite3_stmt *f = ig->st[S_SITE_FIND];
        xp_bind_site(f, k);
        int rc = sqlite3_step(f);
        id = rc == SQLITE_ROW ? sqlite3_column_int64(f, 0) : 0;
        sqlite3_reset(f);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            return xp_ig_db_fail(ig);
    }
    if (id == 0) {
        xp_bind_site(ig->st[S_SITE_ADD], k);
        if (xp_ig_run(ig, S_SITE_ADD) != 0)
            return -1;
        id = sqlite3_last_insert_rowid(ig->db);
        ig->sites_max = id;
    }
    if (!xp_sites_put(ig, k, id))
        ig->sites_all = false;
    return id;
}

sqlite3_int64 xp_ig_site_ref(xp_ingest *ig, const site_key *k)
{
    if (ig->sites_checked && ig->sites != NULL) {
        site_slot *slot = xp_site_slot(ig->sites, ig->site_slots, k);
        if (slot->id != 0)
            return slot->id;
    }
    return xp_site_miss(ig, k);
}

void xp_ig_sites_recheck(xp_ingest *ig)
{
    ig->sites_checked = false;
}

void xp_ig_sites_forget(xp_ingest *ig)
{
    ig->sites_checked = false;
    ig->sites_all = false;
    ig->sites_max = -1;
}

void xp_ig_sites_free(xp_ingest *ig)
{
    free(ig->sites);
    ig->sites = NULL;
    ig->site_slots = ig->site_count = 0;
}
