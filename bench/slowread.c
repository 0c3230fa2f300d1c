/* Slowed storage for the disk streaming benchmark, the same for every server.
 *
 * Loaded with LD_PRELOAD. Every read(), pread(), pread64() and readv() on a
 * file whose path starts with $SLOWREAD_DIR sleeps $SLOWREAD_US microseconds
 * before reading, page cache or not; at exit the number of reads slowed
 * goes to the file $SLOWREAD_STATS, if set. Other descriptors (plugins, sockets,
 * JACK's FIFOs) are left alone: a descriptor is looked at once, through
 * /proc/self/fd, and the answer kept until close() lets it go.
 * libsndfile reads with read() (its only reading import on Debian), so this
 * slows scsynth's and magnetar's disk threads alike.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 65536
enum { UNKNOWN = 0, FAST = 1, SLOW = 2 };

static _Atomic unsigned char kind[MAX_FD];
static _Atomic unsigned long slowed;
static long delay_us = -1;
static char dir[4096];
static size_t dir_len;

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static int (*real_close)(int);

static void resolve(void) {
    real_read = dlsym(RTLD_NEXT, "read");
    real_pread = dlsym(RTLD_NEXT, "pread");
    real_pread64 = dlsym(RTLD_NEXT, "pread64");
    real_readv = dlsym(RTLD_NEXT, "readv");
    real_close = dlsym(RTLD_NEXT, "close");
}

__attribute__((constructor)) static void init(void) {
    if (!real_close) resolve();
    const char *us = getenv("SLOWREAD_US");
    const char *d = getenv("SLOWREAD_DIR");
    if (us && d && *d) {
        delay_us = atol(us);
        snprintf(dir, sizeof dir, "%s", d);
        dir_len = strlen(dir);
    }
}

/* At exit, the number of reads slowed, into $SLOWREAD_STATS if set. */
__attribute__((destructor)) static void report(void) {
    const char *path = getenv("SLOWREAD_STATS");
    if (!path || !*path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%lu\n", atomic_load(&slowed));
    fclose(f);
}

static void maybe_sleep(int fd) {
    if (delay_us <= 0 || fd < 0 || fd >= MAX_FD) return;
    unsigned char k = atomic_load_explicit(&kind[fd], memory_order_relaxed);
    if (k == UNKNOWN) {
        char link[64], path[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        k = FAST;
        if (n > 0) {
            path[n] = 0;
            if ((size_t)n >= dir_len && strncmp(path, dir, dir_len) == 0) k = SLOW;
        }
        atomic_store_explicit(&kind[fd], k, memory_order_relaxed);
    }
    if (k == SLOW) {
        atomic_fetch_add_explicit(&slowed, 1, memory_order_relaxed);
        struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0) {
        }
    }
}

ssize_t read(int fd, void *buf, size_t count) {
    maybe_sleep(fd);
    if (!real_read) resolve();
    return real_read(fd, buf, count);
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset) {
    maybe_sleep(fd);
    if (!real_pread) resolve();
    return real_pread(fd, buf, count, offset);
}

ssize_t pread64(int fd, void *buf, size_t count, off_t offset) {
    maybe_sleep(fd);
    if (!real_pread64) resolve();
    return real_pread64(fd, buf, count, offset);
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt) {
    maybe_sleep(fd);
    if (!real_readv) resolve();
    return real_readv(fd, iov, iovcnt);
}

int close(int fd) {
    if (fd >= 0 && fd < MAX_FD) atomic_store_explicit(&kind[fd], UNKNOWN, memory_order_relaxed);
    if (!real_close) resolve();
    return real_close(fd);
}
