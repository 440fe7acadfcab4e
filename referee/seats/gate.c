/* A gRPC seat's gate (门) in native code: what referee/seats/gate.py does, at a few
 * microseconds a message instead of a Python select loop's tens.
 *
 * It passes bytes between the bot's connections on the seat's socket and the seat's own server
 * on an inner socket no bot reaches, and bounds what reaches the referee: at most CONNECTIONS
 * connections at once (the rest wait in the listen backlog), at most NEW_PER_S new connections
 * a second (a burst of NEW_BURST), at most UP_BYTES_PER_S bytes a second from the bot over all
 * its connections (a burst of UP_BURST). It runs in the seat's cgroup, so what a bot makes it
 * do is that seat's CPU. The bounds and their meaning are gate.py's; a test runs each on both.
 *
 *   arena-gate LISTEN_FD INNER_PATH [UP_BYTES_PER_S UP_BURST]
 *
 * It ends when its standard input closes (the seat's end, or the referee's death).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#define CONNECTIONS 2
#define NEW_PER_S 5.0
#define NEW_BURST 5.0
#define BUFFER (64 * 1024)
#define CLOSING_S 1.0

typedef struct {
    double rate, burst, level, at;
} Bucket;

typedef struct {
    int bot, inner;
    char up[BUFFER], down[BUFFER]; /* from the bot for the server; from the server for the bot */
    size_t up_len, down_len;
    double closing_at; /* < 0: open */
} Pair;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double bucket_now(Bucket *b, double now) {
    double level = b->level + (now - b->at) * b->rate;
    b->level = level < b->burst ? level : b->burst;
    b->at = now;
    return b->level;
}

static double bucket_until(const Bucket *b, double need) {
    double wait = (need - b->level) / b->rate;
    return wait > 0 ? wait : 0;
}

static void set_nonblocking(int fd) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void pair_close(Pair *p) {
    close(p->bot);
    close(p->inner);
}

/* Drop `len` bytes from the front of a buffer. */
static void consume(char *buf, size_t *len, size_t n) {
    memmove(buf, buf + n, *len - n);
    *len -= n;
}

static void accept_one(int listener, const char *inner_path, Pair **pairs, int *count,
                       Bucket *fresh) {
    int bot = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (bot < 0)
        return;
    fresh->level -= 1;
    int inner = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, inner_path, sizeof addr.sun_path - 1);
    if (inner < 0 || connect(inner, (struct sockaddr *)&addr, sizeof addr) < 0) {
        /* the seat's server is gone (the match is ending): the bot is told so */
        if (inner >= 0)
            close(inner);
        close(bot);
        return;
    }
    set_nonblocking(inner);
    Pair *p = calloc(1, sizeof *p);
    if (p == NULL) {
        close(inner);
        close(bot);
        return;
    }
    p->bot = bot;
    p->inner = inner;
    p->closing_at = -1;
    pairs[(*count)++] = p;
}

static void serve(int listener, const char *inner_path, int control, double up_rate,
                  double up_burst) {
    Pair *pairs[CONNECTIONS];
    int count = 0;
    double start = now_s();
    Bucket fresh = {NEW_PER_S, NEW_BURST, NEW_BURST, start};
    Bucket up = {up_rate, up_burst, up_burst, start};
    double up_step = up_burst < 4096 ? up_burst : 4096; /* read from the bot once this may pass */
    set_nonblocking(listener);
    for (;;) {
        struct pollfd fds[2 + 2 * CONNECTIONS];
        int n = 0, listen_at = -1;
        double now = now_s(), timeout = -1;
        fds[n++] = (struct pollfd){.fd = control, .events = POLLIN};
        if (count < CONNECTIONS) {
            if (bucket_now(&fresh, now) >= 1) {
                listen_at = n;
                fds[n++] = (struct pollfd){.fd = listener, .events = POLLIN};
            } else {
                timeout = bucket_until(&fresh, 1);
            }
        }
        double level = bucket_now(&up, now);
        int at[CONNECTIONS][2];
        for (int i = 0; i < count; i++) {
            Pair *p = pairs[i];
            short bot_ev = 0, inner_ev = 0;
            if (p->closing_at < 0) {
                if (p->up_len < BUFFER) {
                    if (level >= up_step) {
                        bot_ev |= POLLIN;
                    } else {
                        double wait = bucket_until(&up, up_step);
                        timeout = timeout < 0 || wait < timeout ? wait : timeout;
                    }
                }
                if (p->down_len < BUFFER)
                    inner_ev |= POLLIN;
            } else {
                double left = p->closing_at + CLOSING_S - now;
                if (left < 0)
                    left = 0;
                timeout = timeout < 0 || left < timeout ? left : timeout;
            }
            if (p->up_len)
                inner_ev |= POLLOUT;
            if (p->down_len)
                bot_ev |= POLLOUT;
            at[i][0] = n;
            /* (a socket with nothing asked of it is left out: a hang-up would wake each pass) */
            fds[n++] = (struct pollfd){.fd = bot_ev ? p->bot : -1, .events = bot_ev};
            at[i][1] = n;
            fds[n++] = (struct pollfd){.fd = inner_ev ? p->inner : -1, .events = inner_ev};
        }
        int ms = timeout < 0 ? -1 : (int)(timeout * 1000) + 1;
        if (poll(fds, n, ms) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[0].revents) {
            char c;
            ssize_t got = read(control, &c, 1);
            if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
                break;
        }
        now = now_s();
        /* the pairs polled this pass, before a new one joins the list */
        int polled = count;
        if (listen_at >= 0 && (fds[listen_at].revents & POLLIN))
            accept_one(listener, inner_path, pairs, &count, &fresh);
        for (int i = 0; i < polled; i++) {
            Pair *p = pairs[i];
            short bot_rev = fds[at[i][0]].revents, inner_rev = fds[at[i][1]].revents;
            int broken = 0;
            double allowed = BUFFER - (double)p->up_len;
            double budget = bucket_now(&up, now);
            if (budget < allowed)
                allowed = budget;
            if ((bot_rev & (POLLIN | POLLHUP | POLLERR)) && (fds[at[i][0]].events & POLLIN)
                    && allowed >= 1) {
                ssize_t got = recv(p->bot, p->up + p->up_len, (size_t)allowed, 0);
                if (got == 0)
                    p->closing_at = now;
                else if (got > 0) {
                    up.level -= (double)got;
                    p->up_len += (size_t)got;
                } else if (errno != EAGAIN && errno != EINTR)
                    broken = 1;
            }
            if (!broken && (inner_rev & (POLLIN | POLLHUP | POLLERR))
                    && (fds[at[i][1]].events & POLLIN)) {
                ssize_t got = recv(p->inner, p->down + p->down_len, BUFFER - p->down_len, 0);
                if (got == 0)
                    p->closing_at = now;
                else if (got > 0)
                    p->down_len += (size_t)got;
                else if (errno != EAGAIN && errno != EINTR)
                    broken = 1;
            }
            if (!broken && p->up_len) {
                ssize_t put = send(p->inner, p->up, p->up_len, MSG_NOSIGNAL);
                if (put > 0)
                    consume(p->up, &p->up_len, (size_t)put);
                else if (put < 0 && errno != EAGAIN && errno != EINTR)
                    broken = 1;
            }
            if (!broken && p->down_len) {
                ssize_t put = send(p->bot, p->down, p->down_len, MSG_NOSIGNAL);
                if (put > 0)
                    consume(p->down, &p->down_len, (size_t)put);
                else if (put < 0 && errno != EAGAIN && errno != EINTR)
                    broken = 1;
            }
            if (broken) { /* reset, broken pipe: the connection is over */
                p->closing_at = now - CLOSING_S;
                p->up_len = p->down_len = 0;
            }
        }
        for (int i = 0; i < count;) {
            Pair *p = pairs[i];
            if (p->closing_at >= 0 && ((!p->up_len && !p->down_len)
                                       || now - p->closing_at >= CLOSING_S)) {
                pair_close(p);
                free(p);
                pairs[i] = pairs[--count];
                /* (the order of the pairs does not matter; the next pass polls afresh) */
            } else {
                i++;
            }
        }
    }
    for (int i = 0; i < count; i++) {
        pair_close(pairs[i]);
        free(pairs[i]);
    }
}

static int digits(const char *s) {
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (!(argc == 3 || argc == 5) || !digits(argv[1]) || (argc == 5 && !(digits(argv[3])
                                                                       && digits(argv[4])))
            || strlen(argv[2]) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        fprintf(stderr, "usage: arena-gate LISTEN_FD INNER_PATH [UP_BYTES_PER_S UP_BURST]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    double rate = argc == 5 ? strtod(argv[3], NULL) : 64 * 1024;
    double burst = argc == 5 ? strtod(argv[4], NULL) : 256 * 1024;
    if (rate <= 0 || burst <= 0) {
        fprintf(stderr, "arena-gate: UP_BYTES_PER_S and UP_BURST must be above 0\n");
        return 2;
    }
    serve(atoi(argv[1]), argv[2], 0, rate, burst);
    return 0;
}
