/* magnetar_gc.h - C interface of the magnetar realtime snapshot garbage collector.
 *
 * One collector per audio thread. mgc_alloc, mgc_alloc_atomic, mgc_write_ptr, mgc_roots,
 * mgc_add_roots, mgc_remove_roots and mgc_between_blocks must all be called from that one thread;
 * mgc_get_stats and mgc_is_collecting may be called from any thread.
 * Licence: GPL-3.0-or-later. */
#ifndef MAGNETAR_GC_H
#define MAGNETAR_GC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct MgcCollector mgc_collector;

typedef struct mgc_config {
    size_t pointer_heap_bytes;        /* scanned and snapshotted; fixes the worst-case copy */
    size_t atomic_heap_bytes;         /* pointer-free blocks; never copied or scanned */
    size_t root_slots;                /* built-in root slots (mgc_roots) */
    size_t max_root_region_bytes;     /* total bytes of mgc_add_roots regions */
    size_t max_allocations_per_cycle; /* allocations between two snapshots */
    size_t max_frees_per_block;       /* freed blocks reclaimed per mgc_between_blocks */
    double full_snapshot_period_s;    /* a full snapshot is due this long after the last (1 s) */
    double full_snapshot_window_s;    /* how long to retry it before warning (1 s) */
    double snapshot_bandwidth;        /* p(M) in bytes/s; 0 = measure at start-up */
    uint32_t num_cpus;                /* CPUs sharing the memory bus; 0 = ask the OS */
    uint32_t use_poison;              /* non-zero: fill freed memory with `poison` */
    uint64_t poison;
    uint32_t prefault;                /* non-zero: touch every page at start-up */
    uint32_t mode;                    /* MGC_MODE_* */
    size_t barrier_log_entries;       /* replicating: distinct slots per barrier log segment */
    size_t barrier_log_spare_segments; /* replicating: spare log segments reserved at start */
    size_t barrier_log_max_segments;  /* replicating: most spare segments ever reserved */
} mgc_config;

typedef struct mgc_time {
    uint64_t count;
    double total_ms, min_ms, mean_ms, max_ms;
} mgc_time;

typedef struct mgc_stats {
    mgc_time blocking;              /* every mgc_between_blocks call */
    mgc_time blocking_without_full; /* the same without full-snapshot blocks */
    mgc_time roots_snapshot;
    mgc_time partial_snapshot;
    mgc_time full_snapshot;         /* including the pad to the worst case */
    mgc_time mark;
    mgc_time sweep;
    double free_busy_ms;
    uint64_t cycles;
    uint64_t allocations;
    uint64_t alloc_failures;
    uint64_t blocks_freed;
    uint64_t live_blocks;
    uint64_t snapshot_failures;
    size_t pointer_heap_used;
    size_t pointer_live_bytes;
    size_t atomic_heap_used;
    size_t atomic_live_bytes;
    size_t safe_limit_bytes;
    double full_snapshot_duration_ms;
    double elapsed_s;
    double blocking_share;   /* blocking time / wall time */
    double concurrent_share; /* mark + sweep + free time / wall time */
    uint32_t warnings;       /* MGC_WARN_* bits */
    uint64_t barrier_logged;    /* replicating: distinct heap slots the barrier logged */
    uint64_t barrier_overflows; /* replicating: collections that scanned the whole block */
    mgc_time merge;             /* replicating: complementary block into snapshot */
    uint64_t barrier_segments_taken; /* replicating: spare log segments chained */
    uint64_t barrier_spare_segments; /* replicating: spare log segments reserved so far */
} mgc_stats;

#define MGC_WARN_SAFETY_BUFFER 1u
#define MGC_WARN_FULL_SNAPSHOT_MISSED 2u
#define MGC_WARN_ALLOCATION_FAILED 4u
#define MGC_WARN_BUDGET_BELOW_WORST_CASE 8u

#define MGC_SNAPSHOT_NONE 0
#define MGC_SNAPSHOT_PARTIAL 1
#define MGC_SNAPSHOT_FULL 2
#define MGC_SNAPSHOT_FAILED 3
#define MGC_SNAPSHOT_COLLECTED 4  /* stop-the-world: mark and sweep ran inside the call */
#define MGC_SNAPSHOT_REPLICATED 5 /* replicating: roots copied, collection started */

#define MGC_MODE_CONCURRENT 0     /* first collector: heap snapshot between blocks */
#define MGC_MODE_STOP_THE_WORLD 1 /* baseline: mark and sweep inside mgc_between_blocks */
#define MGC_MODE_REPLICATING 2    /* second collector: write barrier, roots-only pause */

void mgc_config_default(mgc_config *cfg);
/* NULL on error; the reason is written to err (NUL-terminated) when err_len > 0. */
mgc_collector *mgc_new(const mgc_config *cfg, char *err, size_t err_len);
void mgc_delete(mgc_collector *gc);

/* Realtime safe: bounded time, no system allocator, no lock. NULL when full. */
void *mgc_alloc(mgc_collector *gc, size_t size);        /* zero-filled (or poison) */
void *mgc_alloc_atomic(mgc_collector *gc, size_t size); /* contents unspecified */

/* Write barrier: *slot = value. In MGC_MODE_REPLICATING every pointer store into
 * mgc_alloc memory must go through it (stores of non-pointer data need not); elsewhere and
 * in the other modes it is a plain store. Realtime safe. */
void mgc_write_ptr(mgc_collector *gc, void **slot, void *value);

void **mgc_roots(mgc_collector *gc, size_t *count);
int mgc_add_roots(mgc_collector *gc, const void *start, size_t bytes); /* id >= 0, or -1 */
void mgc_remove_roots(mgc_collector *gc, int id);

/* After each DSP block: budget_ns is the time the engine can spare. Returns MGC_SNAPSHOT_*. */
int mgc_between_blocks(mgc_collector *gc, uint64_t budget_ns);

void mgc_get_stats(const mgc_collector *gc, mgc_stats *out);
int mgc_is_collecting(const mgc_collector *gc);

#ifdef __cplusplus
}
#endif
#endif
