/* Correctness check of the C interface: a rooted linked list survives many collections,
 * unrooted garbage is poisoned (freed), interior pointers keep blocks alive. Exit 0 on success. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "magnetar_gc.h"

#define POISON 0xDEADBEEFDEADBEEFull
#define MAGIC 0x5AFEC0DEull
#define NODES 1000
#define MARK 0x1u /* not a heap address */

struct node {
    uint64_t canary;
    struct node *next;
    double *samples; /* atomic buffer */
};

static int failures = 0;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "gc_check: " __VA_ARGS__); fputc('\n', stderr); failures++; } } while (0)

static void block(mgc_collector *gc) {
    struct timespec ts = {0, 300000};
    mgc_between_blocks(gc, 3000000);
    nanosleep(&ts, NULL);
}

static void run_cycles(mgc_collector *gc, uint64_t n) {
    mgc_stats s;
    mgc_get_stats(gc, &s);
    uint64_t target = s.cycles + n;
    for (int i = 0; i < 20000 && s.cycles < target; i++) {
        block(gc);
        mgc_get_stats(gc, &s);
    }
    for (int i = 0; i < 20; i++) block(gc); /* let freed blocks come back */
}

int main(void) {
    mgc_config cfg;
    char err[200] = {0};
    mgc_config_default(&cfg);
    cfg.pointer_heap_bytes = 1 << 20;
    cfg.atomic_heap_bytes = 1 << 20;
    cfg.snapshot_bandwidth = 2e9;
    cfg.full_snapshot_period_s = 0.05;
    cfg.full_snapshot_window_s = 0.05;
    cfg.use_poison = 1;
    cfg.poison = POISON;

    mgc_config bad = cfg;
    bad.pointer_heap_bytes = 7;
    CHECK(mgc_new(&bad, err, sizeof err) == NULL && strlen(err) > 0, "bad config accepted");

    mgc_collector *gc = mgc_new(&cfg, err, sizeof err);
    if (!gc) { fprintf(stderr, "gc_check: mgc_new failed: %s\n", err); return 1; }
    size_t nroots = 0;
    void **roots = mgc_roots(gc, &nroots);
    CHECK(nroots == 1024, "root slots: %zu", nroots);

    /* A node kept alive only by an interior pointer in a registered root region. */
    static void *globals[2];
    int id = mgc_add_roots(gc, globals, sizeof globals);
    CHECK(id >= 0, "add_roots refused");
    struct node *pinned = mgc_alloc(gc, sizeof *pinned);
    pinned->canary = MAGIC;
    globals[1] = (char *)pinned + 8;

    /* A list built across blocks, so collections run while it grows. */
    struct node *head = NULL;
    struct node *garbage[NODES];
    for (int i = 0; i < NODES; i++) {
        struct node *n = mgc_alloc(gc, sizeof *n);
        struct node *g = mgc_alloc(gc, sizeof *g);
        CHECK(n && g, "alloc failed at %d", i);
        if (!n || !g) break;
        n->canary = MAGIC + (uint64_t)i;
        n->next = head;
        n->samples = mgc_alloc_atomic(gc, 64 * sizeof(double));
        if (n->samples) n->samples[0] = (double)i;
        g->canary = MAGIC + (uint64_t)i;
        g->next = (struct node *)MARK;
        garbage[i] = g;
        head = n;
        roots[0] = head;
        if (i % 10 == 0) block(gc);
    }
    run_cycles(gc, 4);

    int i = NODES - 1, bad_nodes = 0;
    for (struct node *n = head; n; n = n->next, i--) {
        if (n->canary != MAGIC + (uint64_t)i || !n->samples || n->samples[0] != (double)i) bad_nodes++;
    }
    CHECK(i == -1 && bad_nodes == 0, "list damaged: %d bad, ended at %d", bad_nodes, i);
    /* A freed block holds the poison word, or a free-list link, or a newer object. */
    int unfreed = 0;
    for (int k = 0; k < NODES; k++)
        if (garbage[k]->canary == MAGIC + (uint64_t)k && garbage[k]->next == (struct node *)MARK) unfreed++;
    CHECK(unfreed == 0, "%d garbage nodes not freed", unfreed);
    CHECK(pinned->canary == MAGIC, "node held by an interior pointer was freed");

    /* Drop everything: all memory comes back. */
    roots[0] = NULL;
    mgc_remove_roots(gc, id);
    run_cycles(gc, 4);
    mgc_stats s;
    mgc_get_stats(gc, &s);
    CHECK(s.pointer_live_bytes == 0 && s.atomic_live_bytes == 0, "live bytes left: %zu + %zu",
          s.pointer_live_bytes, s.atomic_live_bytes);
    CHECK(s.cycles >= 8 && s.full_snapshot.count >= 1, "cycles %llu, full snapshots %llu",
          (unsigned long long)s.cycles, (unsigned long long)s.full_snapshot.count);
    CHECK(s.alloc_failures == 0, "allocation failures");
    printf("gc_check: %llu cycles, %llu blocks freed, blocking max %.3f ms, full snapshot %.3f ms\n",
           (unsigned long long)s.cycles, (unsigned long long)s.blocks_freed, s.blocking.max_ms,
           s.full_snapshot.mean_ms);
    mgc_delete(gc);

    /* The second collector: pointer stores into the heap go through mgc_write_ptr. */
    cfg.mode = MGC_MODE_REPLICATING;
    cfg.barrier_log_entries = 8; /* small, and no spare segments, so the whole-block fallback runs too */
    cfg.barrier_log_spare_segments = 0;
    cfg.barrier_log_max_segments = 0;
    gc = mgc_new(&cfg, err, sizeof err);
    if (!gc) { fprintf(stderr, "gc_check: replicating mgc_new failed: %s\n", err); return 1; }
    roots = mgc_roots(gc, &nroots);
    head = NULL;
    for (int k = 0; k < NODES; k++) {
        struct node *n = mgc_alloc(gc, sizeof *n);
        struct node *g = mgc_alloc(gc, sizeof *g);
        CHECK(n && g, "replicating alloc failed at %d", k);
        if (!n || !g) break;
        n->canary = MAGIC + (uint64_t)k;
        mgc_write_ptr(gc, (void **)&n->next, head);
        mgc_write_ptr(gc, (void **)&n->samples, mgc_alloc_atomic(gc, 64 * sizeof(double)));
        if (n->samples) n->samples[0] = (double)k;
        g->canary = MAGIC + (uint64_t)k;
        g->next = (struct node *)MARK;
        garbage[k] = g;
        head = n;
        mgc_write_ptr(gc, &roots[0], head);
        if (k % 10 == 0) block(gc);
    }
    run_cycles(gc, 4);
    i = NODES - 1, bad_nodes = 0;
    for (struct node *n = head; n; n = n->next, i--)
        if (n->canary != MAGIC + (uint64_t)i || !n->samples || n->samples[0] != (double)i) bad_nodes++;
    CHECK(i == -1 && bad_nodes == 0, "replicating: list damaged: %d bad, ended at %d", bad_nodes, i);
    unfreed = 0;
    for (int k = 0; k < NODES; k++)
        if (garbage[k]->canary == MAGIC + (uint64_t)k && garbage[k]->next == (struct node *)MARK) unfreed++;
    CHECK(unfreed == 0, "replicating: %d garbage nodes not freed", unfreed);
    roots[0] = NULL;
    run_cycles(gc, 4);
    mgc_get_stats(gc, &s);
    CHECK(s.pointer_live_bytes == 0 && s.atomic_live_bytes == 0, "replicating: live bytes left: %zu + %zu",
          s.pointer_live_bytes, s.atomic_live_bytes);
    CHECK(s.partial_snapshot.count == 0 && s.full_snapshot.count == 0, "replicating: the heap was copied");
    CHECK(s.merge.count >= 8 && s.barrier_overflows >= 1, "replicating: merges %llu, overflows %llu",
          (unsigned long long)s.merge.count, (unsigned long long)s.barrier_overflows);
    printf("gc_check: replicating %llu cycles, %llu blocks freed, blocking max %.3f ms, merge max %.3f ms\n",
           (unsigned long long)s.cycles, (unsigned long long)s.blocks_freed, s.blocking.max_ms, s.merge.max_ms);
    mgc_delete(gc);
    return failures ? 1 : 0;
}
