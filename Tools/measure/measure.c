/* Runs a program and prints its wall time (seconds) and its peak resident set (KiB), from the
 * kernel's account of that process alone (wait4):
 *
 *   measure PROGRAM [ARG…]      prints "SECONDS MAXRSS_KIB"; exits with the program's status
 *
 * The benchmark cannot spawn the measured command itself: a child's recorded peak starts at the
 * resident set of the process it was spawned from (the peak survives exec), and the benchmark
 * holds a million records. This small program is the one spawned from it; the command, spawned
 * from here, starts from almost nothing. The command's standard output goes to /dev/null. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: measure PROGRAM [ARG...]\n");
        return 2;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[1], &actions, 0, argv + 1, environ);
    if (rc != 0) {
        fprintf(stderr, "measure: %s: %s\n", argv[1], strerror(rc));
        return 127;
    }
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid) {
        perror("measure: wait4");
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%.6f %ld\n", (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9, usage.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
