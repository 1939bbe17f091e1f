// Baseline: the floor for one switch and return, a setns pair in C on one thread.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s NETNS_PATH ITERATIONS\n", argv[0]);
    return 2;
  }
  int target = open(argv[1], O_RDONLY | O_CLOEXEC);
  int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (target < 0 || home < 0) {
    perror("open");
    return 1;
  }
  long n = atol(argv[2]);
  double start = now_us();
  for (long i = 0; i < n; i++) {
    if (setns(target, CLONE_NEWNET) != 0 || setns(home, CLONE_NEWNET) != 0) {
      perror("setns");
      return 1;
    }
  }
  printf("%.4f\n", (now_us() - start) / n);
  return 0;
}
