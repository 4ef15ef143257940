/* test_thread.c: per-thread blocks (xp_thread.h): one per thread alive,
 * handed back at thread exit and reused clean, freed in a forked child. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xp_thread.h"

/* Takes the calling thread's block, checks it is clean, dirties it (as a
 * thread that used every part would) and returns it. */
static void *use_block(void *arg)
{
    (void)arg;
    xp_thread *t = xp_thread_get();
    if (t == NULL || xp_thread_get() != t || t->where[5].valid || t->nvtx.n != 0 ||
        t->stack.bounds_known || t->stack.cache[0][0].id != 0)
        return NULL;
    t->where[5].valid = true;
    t->nvtx.n = 3;
    t->stack.bounds_known = true;
    t->stack.cache[0][0].id = 42;
    return t;
}

static void *run_one(void)
{
    pthread_t th;
    void *got = NULL;
    assert_int_equal(pthread_create(&th, NULL, use_block, NULL), 0);
    assert_int_equal(pthread_join(th, &got), 0);
    return got;
}

/* 4000 short-lived threads, one after another, share one block: no memory
 * per thread ever created, and each found it clean. */
static void test_exited_threads_blocks_are_reused(void **state)
{
    (void)state;
    void *first = run_one();
    assert_non_null(first);
    for (int i = 0; i < 4000; i++)
        assert_ptr_equal(run_one(), first);
}

static pthread_barrier_t all_in;

static void *use_block_together(void *arg)
{
    void *t = use_block(arg);
    pthread_barrier_wait(&all_in);
    return t;
}

/* Threads alive at once have blocks of their own. */
static void test_live_threads_have_their_own(void **state)
{
    (void)state;
    enum { N = 8 };
    pthread_t th[N];
    void *got[N];
    assert_int_equal(pthread_barrier_init(&all_in, NULL, N), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, use_block_together, NULL), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(th[i], &got[i]), 0);
        assert_non_null(got[i]);
        for (int k = 0; k < i; k++)
            assert_ptr_not_equal(got[i], got[k]);
    }
    pthread_barrier_destroy(&all_in);
}

static pthread_barrier_t held, release;
static xp_thread *held_block;

static void *hold_block(void *arg)
{
    held_block = use_block(arg);
    pthread_barrier_wait(&held);
    pthread_barrier_wait(&release);
    return held_block;
}

/* In a forked child, the block of a thread that was not forked is free (and
 * the forking thread's is still its own). */
static void test_fork_frees_other_threads_blocks(void **state)
{
    (void)state;
    assert_int_equal(pthread_barrier_init(&held, NULL, 2), 0);
    assert_int_equal(pthread_barrier_init(&release, NULL, 2), 0);
    xp_thread *mine = xp_thread_get();
    assert_non_null(mine);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, hold_block, NULL), 0);
    pthread_barrier_wait(&held);
    assert_non_null(held_block);
    pid_t pid = fork();
    if (pid == 0)
        _exit(atomic_load(&held_block->in_use) ? 1 : !atomic_load(&mine->in_use) ? 2
              : xp_self != mine ? 3 : 0);
    assert_true(pid > 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(atomic_load(&held_block->in_use));   /* the parent's thread still has it */
    pthread_barrier_wait(&release);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    pthread_barrier_destroy(&held);
    pthread_barrier_destroy(&release);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exited_threads_blocks_are_reused),
        cmocka_unit_test(test_live_threads_have_their_own),
        cmocka_unit_test(test_fork_frees_other_threads_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
