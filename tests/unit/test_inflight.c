/* test_inflight.c: counting calls in flight (xp_inflight.h): exit's close
 * and cut leave every call recorded or counted, never both, whether the
 * calls are another thread's or the exiting thread's own (nested, as a
 * signal handler's are), with membarrier and with the fenced way. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>

#include "xp_inflight.h"

/* A fresh gate and counts, as in a forked child; fenced: as where
 * membarrier is missing. */
static void reset(bool fenced)
{
    xp_inflight_after_fork();
    if (fenced)
        atomic_fetch_or(&xp_inflight_gate, XP_GATE_FENCED);
}

static void wait_until(_Atomic int *flag)
{
    while (!atomic_load(flag))
        sched_yield();
}

typedef struct worker {
    _Atomic int inside, go, wrote;
    bool returned;
} worker;

/* A call that is inside the real call until told to return. */
static void *stuck_call(void *arg)
{
    worker *w = arg;
    xp_inflight_slot *s = xp_inflight_enter();
    if (s == NULL)
        return NULL;
    atomic_store(&w->inside, 1);
    wait_until(&w->go);
    w->returned = xp_inflight_returned(s);
    if (w->returned)
        xp_inflight_leave(s);
    return w;
}

static void other_thread_cut(bool fenced)
{
    reset(fenced);
    worker w = {0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stuck_call, &w), 0);
    wait_until(&w.inside);
    xp_inflight_close();
    /* It does not return in time: counted as lost... */
    assert_int_equal(xp_inflight_cut_off(1000 * 1000), 1);
    atomic_store(&w.go, 1);
    void *got = NULL;
    assert_int_equal(pthread_join(th, &got), 0);
    assert_ptr_equal(got, &w);
    /* ...and writes nothing. */
    assert_false(w.returned);
    /* Calls after the close are not recorded. */
    assert_null(xp_inflight_enter());
}

static void cut_inside_real_call(void **state)
{
    (void)state;
    other_thread_cut(false);
}

static void cut_inside_real_call_fenced(void **state)
{
    (void)state;
    other_thread_cut(true);
}

/* A call that returned and is writing until the cut: exit waits for it. */
static void *writing_call(void *arg)
{
    worker *w = arg;
    xp_inflight_slot *s = xp_inflight_enter();
    if (s == NULL || !xp_inflight_returned(s))
        return NULL;
    atomic_store(&w->inside, 1);
    while (!(atomic_load(&xp_inflight_gate) & XP_GATE_CUT))
        sched_yield();
    atomic_store(&w->wrote, 1);
    xp_inflight_leave(s);
    return w;
}

static void writer_waited_for(void **state)
{
    (void)state;
    reset(false);
    worker w = {0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, writing_call, &w), 0);
    wait_until(&w.inside);
    xp_inflight_close();
    /* Not counted: it writes its record, and the cut waits for it. */
    assert_int_equal(xp_inflight_cut_off(1000 * 1000 * 1000), 0);
    assert_int_equal(atomic_load(&w.wrote), 1);
    void *got = NULL;
    assert_int_equal(pthread_join(th, &got), 0);
    assert_ptr_equal(got, &w);
}

/* The exiting thread's own calls, one nested in the other as a signal
 * handler's call is in the call it interrupted: both inside the real call
 * are counted and write nothing; one already writing is not counted. */
static void own_nested_calls(bool inner_returned)
{
    reset(false);
    xp_inflight_slot *a = xp_inflight_enter(), *b = xp_inflight_enter();
    assert_non_null(a);
    assert_ptr_equal(a, b);
    if (inner_returned)
        assert_true(xp_inflight_returned(b));
    xp_inflight_close();
    assert_int_equal(xp_inflight_cut_off(0), inner_returned ? 1 : 2);
    if (inner_returned)
        xp_inflight_leave(b);
    else
        assert_false(xp_inflight_returned(b));
    assert_false(xp_inflight_returned(a));
    assert_false(xp_inflight_busy(a));
    /* A later call at a level the cut counted is refused, not taken for
     * one of the counted ones. */
    assert_null(xp_inflight_enter());
    assert_false(xp_inflight_busy(a));
}

static void own_calls_cut(void **state)
{
    (void)state;
    own_nested_calls(false);
}

static void own_inner_call_writing(void **state)
{
    (void)state;
    own_nested_calls(true);
}

static void refused_after_close(void **state)
{
    (void)state;
    reset(false);
    xp_inflight_close();
    assert_null(xp_inflight_enter());
    assert_null(xp_inflight_enter());
    assert_int_equal(xp_inflight_cut_off(0), 2);
}

int main(void)
{
    xp_inflight_start();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cut_inside_real_call),
        cmocka_unit_test(cut_inside_real_call_fenced),
        cmocka_unit_test(writer_waited_for),
        cmocka_unit_test(own_calls_cut),
        cmocka_unit_test(own_inner_call_writing),
        cmocka_unit_test(refused_after_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
