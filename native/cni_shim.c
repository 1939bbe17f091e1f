/*
 * netns-cni-shim: installed as a CNI plugin's binary (copied or linked under
 * the plugin's name), it forwards each call to the plugin's resident daemon
 * (serveResident in netns/cni) and passes the answer on as if the plugin had
 * run here: its whole environment and stdin go over a unix socket, with its
 * network namespace (the daemon runs the call there, as a plugin process acts
 * where it runs), and the daemon's stdout, stderr and exit status come back.
 *
 * Socket: $NETNS_CNI_SOCKET, else /run/netns-cni/<basename of argv[0]>.sock.
 * Deadline for the whole call: $NETNS_CNI_TIMEOUT seconds (1 to 86400,
 * default 120); after it the shim gives up and exits, and the daemon, seeing
 * the connection end before its answer, cancels the call (its handler rolls
 * back what it made). So does a shim killed mid-call.
 * A daemon that cannot be reached is CNI error 11 (try again later), naming
 * the socket; a connection lost or timed out mid-call is 999. Either error is
 * printed on stdout as the spec has it, with exit status 1.
 *
 * Wire format: src/cni/daemon/protocol.ts. Plain C, linked statically, with
 * no heap: every buffer is fixed, the daemon's stdout at most MAX_STDOUT bytes
 * and stdin at most MAX_STDIN (static, so only the pages used are touched).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h> /* struct timeval (SO_RCVTIMEO): glibc's sys/socket.h brings it, musl's does not */
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_ENV (4u << 20)
#define MAX_STDIN (16u << 20)
#define MAX_STDOUT (1u << 20)
#define DEFAULT_TIMEOUT_S 120
#define MAX_TIMEOUT_S 86400
#define CNI_TRY_AGAIN 11
#define CNI_INVALID_ENV 4
#define CNI_INTERNAL 999

extern char **environ;

static char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char answer[MAX_STDOUT];
static char config[MAX_STDIN];
static char chunk[65536];
static int64_t deadline_ms;

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Appends `text` to `out` (of `size`) as JSON string content; cut short rather than overflow. */
static size_t json_append(char *out, size_t used, size_t size, const char *text) {
  static const char hex[] = "0123456789abcdef";
  for (const unsigned char *c = (const unsigned char *)text; *c != '\0' && used + 7 < size; c++) {
    if (*c == '"' || *c == '\\') {
      out[used++] = '\\';
      out[used++] = (char)*c;
    } else if (*c < 0x20) {
      memcpy(out + used, "\\u00", 4);
      out[used + 4] = hex[*c >> 4];
      out[used + 5] = hex[*c & 15];
      used += 6;
    } else {
      out[used++] = (char)*c;
    }
  }
  return used;
}

static int wait_for(int fd, short events) {
  for (;;) {
    int64_t left = deadline_ms - now_ms();
    if (left <= 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    struct pollfd p = {.fd = fd, .events = events};
    int ready = poll(&p, 1, left > 60000 ? 60000 : (int)left);
    if (ready > 0) return 0;
    if (ready < 0 && errno != EINTR) return -1;
  }
}

static int write_all(int fd, const char *data, size_t length) {
  while (length > 0) {
    ssize_t n = write(fd, data, length);
    if (n > 0) {
      data += n;
      length -= (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_for(fd, POLLOUT) != 0) return -1;
    } else {
      return -1;
    }
  }
  return 0;
}

/* Bytes read (0 at end of file), or -1 with errno (ETIMEDOUT past the deadline). */
static ssize_t read_some(int fd, char *into, size_t length) {
  for (;;) {
    if (wait_for(fd, POLLIN) != 0) return -1;
    ssize_t n = read(fd, into, length);
    if (n >= 0) return n;
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) return -1;
  }
}

/* 0 when all `length` bytes came; -1 at an early end (errno 0) or a failure. */
static int read_exact(int fd, char *into, size_t length) {
  while (length > 0) {
    ssize_t n = read_some(fd, into, length);
    if (n <= 0) {
      if (n == 0) errno = 0;
      return -1;
    }
    into += n;
    length -= (size_t)n;
  }
  return 0;
}

/* Prints the CNI error object on stdout (as pluginMain prints one) and exits 1. */
static void fail(int code, const char *msg, int err) __attribute__((noreturn));
static void fail(int code, const char *msg, int err) {
  static char line[4096];
  const size_t room = sizeof line - 4; /* for the closing "}\n */
  size_t used = (size_t)snprintf(line, sizeof line, "{\"cniVersion\":\"1.1.0\",\"code\":%d,\"msg\":\"", code);
  used = json_append(line, used, room, msg);
  used = json_append(line, used, room, " (resident daemon socket ");
  used = json_append(line, used, room, socket_path);
  used = json_append(line, used, room, ")");
  if (err != 0) {
    used = json_append(line, used, room, ": ");
    used = json_append(line, used, room, strerror(err));
  }
  memcpy(line + used, "\"}\n", 3);
  write_all(STDOUT_FILENO, line, used + 3);
  _exit(1);
}

static void choose_socket(const char *argv0) {
  const char *named = getenv("NETNS_CNI_SOCKET");
  int length;
  if (named != NULL && named[0] != '\0') {
    length = snprintf(socket_path, sizeof socket_path, "%s", named);
  } else {
    const char *slash = strrchr(argv0, '/');
    length = snprintf(socket_path, sizeof socket_path, "/run/netns-cni/%s.sock", slash ? slash + 1 : argv0);
  }
  if (length < 0 || (size_t)length >= sizeof socket_path) fail(CNI_INVALID_ENV, "the socket path is too long", 0);
}

static void choose_deadline(void) {
  const char *text = getenv("NETNS_CNI_TIMEOUT");
  long seconds = DEFAULT_TIMEOUT_S;
  if (text != NULL && text[0] != '\0') {
    char *end;
    errno = 0;
    seconds = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || seconds < 1 || seconds > MAX_TIMEOUT_S) fail(CNI_INVALID_ENV, "NETNS_CNI_TIMEOUT must be whole seconds from 1 to 86400", 0);
  }
  deadline_ms = now_ms() + seconds * 1000;
}

/* Connected and non-blocking; a daemon not there is error 11. */
static int connect_daemon(void) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(CNI_INTERNAL, "cannot make a socket", errno);
  /* A unix connect blocks only while the daemon's backlog is full: bounded by the send timeout. */
  int64_t left = deadline_ms - now_ms();
  if (left < 1) left = 1; /* a zero timeout would mean none */
  struct timeval limit = {.tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000};
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  memcpy(address.sun_path, socket_path, strlen(socket_path) + 1);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) != 0) fail(CNI_INTERNAL, "cannot set the connect timeout", errno);
  while (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    if (errno == EISCONN) break; /* an interrupted connect that went through */
    if (errno != EINTR) fail(CNI_TRY_AGAIN, "the plugin's resident daemon is not running", errno);
  }
  if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) fail(CNI_INTERNAL, "cannot make the socket non-blocking", errno);
  return fd;
}

static void put_u32(char *at, uint32_t value) {
  at[0] = (char)(value >> 24);
  at[1] = (char)(value >> 16);
  at[2] = (char)(value >> 8);
  at[3] = (char)value;
}

static uint32_t get_u32(const char *at) {
  const unsigned char *b = (const unsigned char *)at;
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/*
 * The plugin's stdin, to its end: its length goes first in the request. Without
 * a command, or for VERSION, the plugin reads no stdin (a runtime may not even
 * close it). Read before connecting, so a slow writer holds no daemon connection.
 */
static size_t read_stdin(void) {
  const char *command = getenv("CNI_COMMAND");
  if (command == NULL || command[0] == '\0' || strcmp(command, "VERSION") == 0) return 0;
  size_t total = 0;
  for (;;) {
    /* One byte past the limit is read into `chunk`, to tell "exactly full" from "too long". */
    ssize_t n = total < MAX_STDIN ? read_some(STDIN_FILENO, config + total, MAX_STDIN - total) : read_some(STDIN_FILENO, chunk, 1);
    if (n < 0) fail(CNI_INTERNAL, "cannot read the configuration from stdin", errno);
    if (n == 0) return total;
    if (total == MAX_STDIN) fail(CNI_INTERNAL, "the configuration on stdin is larger than the daemon accepts", 0);
    total += (size_t)n;
  }
}

/*
 * The header goes with a descriptor of this process's network namespace
 * (SCM_RIGHTS): the daemon receives it with the first bytes it reads.
 */
static int send_header(int fd, const char *header, size_t length) {
  int ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (ns < 0) fail(CNI_INTERNAL, "cannot open its own network namespace (/proc/self/ns/net)", errno);
  union {
    char bytes[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct iovec iov = {.iov_base = (void *)header, .iov_len = length};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof control.bytes};
  struct cmsghdr *rights = CMSG_FIRSTHDR(&msg);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(rights), &ns, sizeof ns);
  ssize_t sent;
  while ((sent = sendmsg(fd, &msg, 0)) < 0) {
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd, POLLOUT) == 0) continue;
    break;
  }
  int err = errno;
  close(ns); /* once sent, the kernel holds it for the daemon */
  if (sent < 0) {
    errno = err;
    return -1;
  }
  return write_all(fd, header + sent, length - (size_t)sent);
}

/*
 * The header (with the namespace), every NAME=value with its NUL (as
 * /proc/PID/environ holds them), then stdin. No half-close after it: the
 * connection stays open until the answer, and its end before then tells the
 * daemon that this caller is gone.
 */
static int send_request(int fd, size_t stdin_length) {
  size_t length = 0;
  for (char **entry = environ; *entry != NULL; entry++) length += strlen(*entry) + 1;
  if (length > MAX_ENV) fail(CNI_INVALID_ENV, "the environment is larger than the daemon accepts", 0);
  char header[12];
  memcpy(header, "NCS3", 4);
  put_u32(header + 4, (uint32_t)length);
  put_u32(header + 8, (uint32_t)stdin_length);
  if (send_header(fd, header, sizeof header) != 0) return -1;
  for (char **entry = environ; *entry != NULL; entry++) {
    if (write_all(fd, *entry, strlen(*entry) + 1) != 0) return -1;
  }
  return write_all(fd, config, stdin_length);
}

static void lost(int err) __attribute__((noreturn));
static void lost(int err) {
  if (err == ETIMEDOUT) fail(CNI_INTERNAL, "the plugin's resident daemon did not answer in time (NETNS_CNI_TIMEOUT)", 0);
  fail(CNI_INTERNAL, "the plugin's resident daemon closed the connection before answering (it may have stopped mid-call)", err);
}

/*
 * A runtime may start the shim with stdin, stdout or stderr closed: the socket
 * would then take that number, and the shim read its own request as stdin or
 * write its answer into the daemon. Each closed one is /dev/null instead (a
 * closed stdin reads as empty: the daemon says the configuration is missing).
 */
static void keep_standard_descriptors(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null != fd) _exit(1); /* open takes the lowest free number: fd itself, or there is nothing to say it on */
  }
}

int main(int argc, char **argv) {
  (void)argc;
  keep_standard_descriptors();
  signal(SIGPIPE, SIG_IGN); /* a closed socket or stdout is an error return, not death */
  choose_socket(argv[0] != NULL ? argv[0] : "");
  choose_deadline();
  size_t stdin_length = read_stdin();
  int fd = connect_daemon();
  /* A daemon that refuses the request answers before reading it all: read the answer whatever sending did. */
  send_request(fd, stdin_length);
  char header[16];
  if (read_exact(fd, header, sizeof header) != 0) lost(errno);
  if (memcmp(header, "NCR1", 4) != 0) fail(CNI_INTERNAL, "the resident daemon's answer is not one this shim reads (another version?)", 0);
  uint32_t status = get_u32(header + 4), out_length = get_u32(header + 8), err_length = get_u32(header + 12);
  if (out_length > MAX_STDOUT) fail(CNI_INTERNAL, "the resident daemon's answer is larger than this shim passes on", 0);
  if (read_exact(fd, answer, out_length) != 0) lost(errno);
  while (err_length > 0) {
    ssize_t n = read_some(fd, chunk, err_length < sizeof chunk ? err_length : sizeof chunk);
    if (n <= 0) lost(n == 0 ? 0 : errno);
    write_all(STDERR_FILENO, chunk, (size_t)n); /* logs: a closed stderr loses them, not the result */
    err_length -= (uint32_t)n;
  }
  /* stdout only once whole: a call cut short prints the error object alone. */
  if (write_all(STDOUT_FILENO, answer, out_length) != 0) _exit(1);
  return status > 255 ? 1 : (int)status;
}
