// A static test program run as a container by the runtime tests (on the host
// in process mode, from a busybox rootfs in oci mode). See BUILD.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static void PrintCounted(const char* key, const char* s) {
  printf("%s %zu:%s\n", key, strlen(s), s);
}

static void SleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc < 2) return 2;
  const char* mode = argv[1];
  if (strcmp(mode, "exit") == 0) {  // exit CODE [DELAY_MS]
    if (argc > 3) SleepMs(atol(argv[3]));
    printf("started\n");
    return atoi(argv[2]);
  }
  if (strcmp(mode, "argv") == 0) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n < 0 ? 0 : n] = '\0';
    PrintCounted("exe", exe);
    for (int i = 0; i < argc; ++i) PrintCounted("arg", argv[i]);
    printf("end\n");
    return 0;
  }
  if (strcmp(mode, "env") == 0) {
    for (char** e = environ; *e != NULL; ++e) PrintCounted("env", *e);
    printf("end\n");
    return 0;
  }
  if (strcmp(mode, "cwd") == 0) {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd)) == NULL) return 1;
    PrintCounted("cwd", cwd);
    return 0;
  }
  if (strcmp(mode, "hosts") == 0) {  // hosts NAME: hostname, NAME's address
    char host[256];
    gethostname(host, sizeof(host));
    PrintCounted("hostname", host);
    FILE* f = fopen("/etc/hosts", "r");
    char line[1024];
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
      char* save = NULL;
      char* addr = strtok_r(line, " \t\n", &save);
      for (char* name = strtok_r(NULL, " \t\n", &save); addr && name;
           name = strtok_r(NULL, " \t\n", &save)) {
        if (argc > 2 && strcmp(name, argv[2]) == 0) {
          PrintCounted("address", addr);
          return 0;
        }
      }
    }
    return 1;
  }
  if (strcmp(mode, "hog") == 0) {  // hog MB
    long mb = atol(argv[2]);
    for (long i = 0; i < mb; ++i) {
      char* p = malloc(1 << 20);
      if (p == NULL) return 3;
      memset(p, 1, 1 << 20);
    }
    printf("survived\n");
    return 0;
  }
  if (strcmp(mode, "orphan") == 0) {  // ignores SIGTERM, double-forks
    signal(SIGTERM, SIG_IGN);
    pid_t child = fork();
    if (child == 0) {
      setsid();
      if (fork() == 0) {
        printf("orphan=%d\n", (int)getpid());
        for (;;) pause();
      }
      _exit(0);
    }
    printf("main=%d\n", (int)getpid());
    for (;;) pause();
  }
  if (strcmp(mode, "cgroup") == 0) {  // prints /proc/self/cgroup
    FILE* f = fopen("/proc/self/cgroup", "r");
    if (f == NULL) return 1;
    char line[4096];
    while (fgets(line, sizeof(line), f) != NULL) fputs(line, stdout);
    fclose(f);
    return 0;
  }
  if (strcmp(mode, "sleep") == 0) {  // sleep MS [CODE]
    printf("started\n");
    SleepMs(atol(argv[2]));
    return argc > 3 ? atoi(argv[3]) : 0;
  }
  if (strcmp(mode, "failonce") == 0) {  // failonce MARKER
    struct stat st;
    if (stat(argv[2], &st) == 0) {
      printf("second run\n");
      return 0;
    }
    FILE* f = fopen(argv[2], "w");
    if (f != NULL) fclose(f);
    printf("first run\n");
    return 1;
  }
  if (strcmp(mode, "listen") == 0) {  // listen PORT DELAY_MS
    SleepMs(atol(argv[3]));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)atoi(argv[2]));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr*)&addr, sizeof(addr)) != 0) return 4;
    listen(fd, 16);
    printf("listening\n");
    for (;;) {
      int c = accept(fd, NULL, NULL);
      if (c < 0) continue;
      char buf[1024];
      (void)!read(c, buf, sizeof(buf));
      static const char kOk[] = "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
      (void)!write(c, kOk, sizeof(kOk) - 1);
      close(c);
    }
  }
  if (strcmp(mode, "packet") == 0) {  // opens an AF_PACKET raw socket
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) {
      printf("packet %s\n", errno == EPERM ? "EPERM" : strerror(errno));
    } else {
      printf("packet ok\n");
      close(fd);
    }
    return 0;
  }
  if (strcmp(mode, "spam") == 0) {  // spam BYTES [TIMES PAUSE_MS]
    long total = atol(argv[2]);
    int times = argc > 3 ? atoi(argv[3]) : 1;
    int pause_ms = argc > 4 ? atoi(argv[4]) : 0;
    char line[101];
    memset(line, 'x', 100);
    line[100] = '\n';
    for (int i = 0; i < times; ++i) {
      if (i > 0) usleep(pause_ms * 1000);
      for (long done = 0; done < total; done += 101) {
        fwrite(line, 1, 101, stdout);
      }
      fflush(stdout);
    }
    return 0;
  }
  return 2;
}
