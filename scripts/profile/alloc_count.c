/* Counts the heap allocations of a process (LD_PRELOAD): malloc, calloc, realloc and the
 * aligned forms, all threads. On SIGUSR2 it appends "<allocations> <bytes>\n" so far to
 * the file ALLOC_COUNT_FILE names. `make profile` (PROFILE_ALLOCS=1) reads it before and
 * after the measured window for the server's allocations per request. Built by
 * scripts/profile.sh with the system's C compiler. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong allocations, bytes;
static int out = -1;

static void counted(size_t size) {
  atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
}

void *malloc(size_t size) { counted(size); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { counted(n * size); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { counted(size); return __libc_realloc(p, size); }
void *memalign(size_t align, size_t size) { counted(size); return __libc_memalign(align, size); }
void *aligned_alloc(size_t align, size_t size) { counted(size); return __libc_memalign(align, size); }
int posix_memalign(void **p, size_t align, size_t size) {
  counted(size);
  *p = __libc_memalign(align, size);
  return *p ? 0 : ENOMEM;
}

static void report(int sig) {
  (void)sig;
  char line[64];
  int len = snprintf(line, sizeof line, "%lu %lu\n",
                     atomic_load(&allocations), atomic_load(&bytes));
  if (out >= 0 && len > 0) (void)!write(out, line, (size_t)len);
}

__attribute__((constructor)) static void start(void) {
  const char *path = getenv("ALLOC_COUNT_FILE");
  if (!path) return;
  out = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = report;
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR2, &action, NULL);
}
