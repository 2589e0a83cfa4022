/* Test-only LD_PRELOAD library for cli_test: rename() whose destination's file name is
 * $GPUSORT_TEST_RENAME_FAIL fails with EPERM (as in a sticky directory, which does not stop root,
 * under whom CI runs), and one whose destination's name is $GPUSORT_TEST_RENAME_SIGNAL first
 * sends SIGTERM to the process. So the tests reach a commit's failure and interruption paths. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
