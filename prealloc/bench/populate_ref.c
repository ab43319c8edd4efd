/* populate_ref: the smallest possible preallocation, as a yardstick for qlaunch's own.
 *
 * Creates one memfd of SIZE bytes (hugetlb pages of PAGE bytes, or ordinary pages when PAGE is
 * 4096), maps it MAP_SHARED, populates it with madvise(MADV_POPULATE_WRITE) -- one call on one
 * thread, or with THREADS > 1 one call per thread on equal page-aligned slices (no pinning, no
 * NUMA policy) -- and prints the time of create+map+populate+unmap as JSON on stdout.
 *
 * Build: cc -O2 -pthread -o populate_ref prealloc/bench/populate_ref.c
 * Usage: populate_ref SIZE_MIB [PAGE_KIB [THREADS]]      (PAGE_KIB default 2048, THREADS 1)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/memfd.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct slice {
  char* start;
  size_t len;
  int err;
};

static void* populate_slice(void* arg) {
  struct slice* s = arg;
  if (s->len && madvise(s->start, s->len, MADV_POPULATE_WRITE) != 0) s->err = errno;
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: %s SIZE_MIB [PAGE_KIB [THREADS]]\n", argv[0]);
    return 2;
  }
  uint64_t size = strtoull(argv[1], NULL, 10) << 20;
  uint64_t page = (argc > 2 ? strtoull(argv[2], NULL, 10) : 2048) << 10;
  unsigned nthreads = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1;
  unsigned flags = MFD_CLOEXEC;
  if (page != (uint64_t)sysconf(_SC_PAGESIZE))
    flags |= MFD_HUGETLB | ((unsigned)__builtin_ctzll(page) << MFD_HUGE_SHIFT);
  if (nthreads < 1 || nthreads > 1024) {
    fprintf(stderr, "populate_ref: THREADS must be 1..1024\n");
    return 2;
  }
  if (size == 0 || size % page != 0) {
    fprintf(stderr, "populate_ref: size must be a positive multiple of the page size\n");
    return 2;
  }

  double t0 = now();
  int fd = memfd_create("populate_ref", flags);
  if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
    perror("populate_ref: memfd_create/ftruncate");
    return 1;
  }
  void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("populate_ref: mmap (hugepage pool too small?)");
    return 1;
  }
  double t1 = now();
  struct slice slices[1024];
  pthread_t tids[1024];
  uint64_t pages = size / page, done = 0;
  for (unsigned i = 0; i < nthreads; ++i) {
    uint64_t n = pages / nthreads + (i < pages % nthreads);
    slices[i] = (struct slice){(char*)p + done * page, n * page, 0};
    done += n;
    if (i > 0 && pthread_create(&tids[i], NULL, populate_slice, &slices[i]) != 0) {
      fprintf(stderr, "populate_ref: pthread_create failed\n");
      return 1;
    }
  }
  populate_slice(&slices[0]);
  for (unsigned i = 1; i < nthreads; ++i) pthread_join(tids[i], NULL);
  for (unsigned i = 0; i < nthreads; ++i) {
    if (slices[i].err) {
      errno = slices[i].err;
      perror("populate_ref: madvise(MADV_POPULATE_WRITE)");
      return 1;
    }
  }
  double t2 = now();
  munmap(p, size);
  double t3 = now();
  close(fd);
  printf("{\"size_bytes\": %llu, \"page_size_bytes\": %llu, \"threads\": %u, "
         "\"seconds\": %.6f, \"populate_seconds\": %.6f, \"gib_per_s\": %.3f}\n",
         (unsigned long long)size, (unsigned long long)page, nthreads, t3 - t0, t2 - t1,
         (double)size / (t3 - t0) / (1024.0 * 1024 * 1024));
  return 0;
}
