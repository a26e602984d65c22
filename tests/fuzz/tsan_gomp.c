/* tsan_gomp.c: tell ThreadSanitizer about libgomp's synchronization.
 *
 * libgomp is not built with -fsanitize=thread, so TSan does not see that a team's threads start
 * after the master's earlier writes, that the master continues after their writes, or that a
 * barrier orders what comes before it against what comes after. Linked with
 * -Wl,--wrap=GOMP_parallel,--wrap=GOMP_barrier,... each entry point below calls the real one
 * (__real_X) and marks those orders with __tsan_release / __tsan_acquire, so that only races in
 * the program's own code are reported. Entry points not listed here are refused by the test
 * (it checks the object's undefined GOMP_* symbols), so nothing is silently missed. */
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

static char fork_sync, join_sync, barrier_sync, lock_sync;

struct region { void (*fn)(void *); void *data; };

static void team_member(void *p)
{
    struct region *r = p;
    __tsan_acquire(&fork_sync);
    r->fn(r->data);
    __tsan_release(&join_sync);
}

void __real_GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
void __wrap_GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    struct region r = {fn, data};
    __tsan_release(&fork_sync);
    __real_GOMP_parallel(team_member, &r, num_threads, flags);
    __tsan_acquire(&join_sync);
}

#define BARRIER_LIKE(name)                 \
    void __real_##name(void);              \
    void __wrap_##name(void)               \
    {                                      \
        __tsan_release(&barrier_sync);     \
        __real_##name();                   \
        __tsan_acquire(&barrier_sync);     \
    }

BARRIER_LIKE(GOMP_barrier)
BARRIER_LIKE(GOMP_loop_end)
BARRIER_LIKE(GOMP_sections_end)

#define LOCK_LIKE(start, end)                          \
    void __real_##start(void);                         \
    void __wrap_##start(void)                          \
    {                                                  \
        __real_##start();                              \
        __tsan_acquire(&lock_sync);                    \
    }                                                  \
    void __real_##end(void);                           \
    void __wrap_##end(void)                            \
    {                                                  \
        __tsan_release(&lock_sync);                    \
        __real_##end();                                \
    }

LOCK_LIKE(GOMP_critical_start, GOMP_critical_end)
LOCK_LIKE(GOMP_atomic_start, GOMP_atomic_end)
