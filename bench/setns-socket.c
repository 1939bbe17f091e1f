// Baseline: the floor for creating a socket in a namespace from one thread:
// setns in, socket(), setns back, close.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
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
    if (setns(target, CLONE_NEWNET) != 0) return 1;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (setns(home, CLONE_NEWNET) != 0 || fd < 0) return 1;
    close(fd);
  }
  printf("%.4f\n", (now_us() - start) / n);
  return 0;
}
