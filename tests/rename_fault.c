/* Test-only LD_PRELOAD library for cli_test: faults that the tests cannot cause otherwise (CI runs
 * as root, where permissions stop nothing, and cannot mount a small file system).
 *  - rename() whose destination's file name is $GPUSORT_TEST_RENAME_FAIL fails with EPERM (as in
 *    a sticky directory, which does not stop root), and one whose destination's name is
 *    $GPUSORT_TEST_RENAME_SIGNAL first sends SIGTERM to the process. So the tests reach a
 *    commit's failure and interruption paths.
 *  - statvfs() reports $GPUSORT_TEST_FREE_BYTES free bytes: a nearly full disk.
 *  - pwrite() to one of gpusort's temporary files (".gpusort-*") that would reach past byte
 *    $GPUSORT_TEST_WRITE_FAIL_BEYOND fails with $GPUSORT_TEST_WRITE_FAIL (ENOSPC or EFBIG): a disk
 *    that fills up, or a file system's largest file, during the sort. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

static int names(const char* variable, const char* path) {
  const char* name = getenv(variable);
  const char* slash = strrchr(path, '/');
  return name && *name && strcmp(slash ? slash + 1 : path, name) == 0;
}

int rename(const char* from, const char* to) {
  int (*real_rename)(const char*, const char*) =
      (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
  if (names("GPUSORT_TEST_RENAME_FAIL", to)) {
    errno = EPERM;
    return -1;
  }
  if (names("GPUSORT_TEST_RENAME_SIGNAL", to)) kill(getpid(), SIGTERM);
  return real_rename(from, to);
}

static int fake_free_bytes(struct statvfs* st) {
  const char* free_bytes = getenv("GPUSORT_TEST_FREE_BYTES");
  if (!free_bytes || !*free_bytes) return 0;
  st->f_frsize = 1;
  st->f_bavail = st->f_bfree = strtoull(free_bytes, NULL, 10);
  return 1;
}

int statvfs(const char* path, struct statvfs* st) {
  int (*real_statvfs)(const char*, struct statvfs*) =
      (int (*)(const char*, struct statvfs*))dlsym(RTLD_NEXT, "statvfs");
  const int result = real_statvfs(path, st);
  if (result == 0) fake_free_bytes(st);
  return result;
}

int statvfs64(const char* path, struct statvfs64* st) {
  int (*real_statvfs64)(const char*, struct statvfs64*) =
      (int (*)(const char*, struct statvfs64*))dlsym(RTLD_NEXT, "statvfs64");
  const int result = real_statvfs64(path, st);
  struct statvfs faked;
  if (result == 0 && fake_free_bytes(&faked)) {
    st->f_frsize = faked.f_frsize;
    st->f_bavail = st->f_bfree = faked.f_bavail;
  }
  return result;
}

/* The error a write to `fd` of `bytes` at `offset` fails with, or 0. */
static int write_fault(int fd, size_t bytes, off_t offset) {
  const char* error = getenv("GPUSORT_TEST_WRITE_FAIL");
  const char* beyond = getenv("GPUSORT_TEST_WRITE_FAIL_BEYOND");
  if (!error || !*error || !beyond ||
      (unsigned long long)offset + bytes <= strtoull(beyond, NULL, 10))
    return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, target, sizeof target - 1);
  if (length <= 0) return 0;
  target[length] = '\0';
  const char* slash = strrchr(target, '/');
  if (strncmp(slash ? slash + 1 : target, ".gpusort-", 9) != 0) return 0;
  return strcmp(error, "EFBIG") == 0 ? EFBIG : ENOSPC;
}

ssize_t pwrite(int fd, const void* data, size_t bytes, off_t offset) {
  ssize_t (*real_pwrite)(int, const void*, size_t, off_t) =
      (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  const int error = write_fault(fd, bytes, offset);
  if (error) {
    errno = error;
    return -1;
  }
  return real_pwrite(fd, data, bytes, offset);
}

ssize_t pwrite64(int fd, const void* data, size_t bytes, off64_t offset) {
  ssize_t (*real_pwrite64)(int, const void*, size_t, off64_t) =
      (ssize_t(*)(int, const void*, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64");
  const int error = write_fault(fd, bytes, (off_t)offset);
  if (error) {
    errno = error;
    return -1;
  }
  return real_pwrite64(fd, data, bytes, offset);
}
