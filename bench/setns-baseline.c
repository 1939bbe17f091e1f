// Baselines in C, one thread, no pool: the floor for what the package does.
//   pair:   setns into the target and back
//   socket: setns in, socket(), setns back, close
// Prints the mean microseconds per iteration.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int iteration(int target, int home, int with_socket) {
  if (setns(target, CLONE_NEWNET) != 0) return -1;
  int fd = with_socket ? socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : 0;
  if (setns(home, CLONE_NEWNET) != 0 || fd < 0) return -1;
  if (with_socket) close(fd);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[1], "pair") != 0 && strcmp(argv[1], "socket") != 0)) {
    fprintf(stderr, "usage: %s pair|socket NETNS_PATH ITERATIONS\n", argv[0]);
    return 2;
  }
  int with_socket = strcmp(argv[1], "socket") == 0;
  int target = open(argv[2], O_RDONLY | O_CLOEXEC);
  int home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (target < 0 || home < 0) {
    perror("open");
    return 1;
  }
  long n = atol(argv[3]);
  double start = now_us();
  for (long i = 0; i < n; i++) {
    if (iteration(target, home, with_socket) != 0) {
      perror("setns/socket");
      return 1;
    }
  }
  printf("%.4f\n", (now_us() - start) / n);
  return 0;
}
