// SPDX-License-Identifier: GPL-2.0
/*
 * itrace-fuzz: a worker's life, its threads and children, and the table of
 * fds and mappings its ops work on.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "fuzz.h"

int shm_fd = -1;	/* the memfd of sh, for execve()d children */

static __thread struct ctx *cur;

struct ctx *self_ctx(void)
{
	return cur;
}

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

long page_size(void)
{
	static long psz;

	if (!psz)
		psz = sysconf(_SC_PAGESIZE);
	return psz;
}

/* As become_nobody() of the kselftests (itrace_test.h), groups too. */
int become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return -1;
	/* changing credentials made us non-dumpable: no RLIMIT_ITRACE trace */
	return prctl(PR_SET_DUMPABLE, 1);
}

/* SIGSEGV and SIGBUS: back to the op that expected them, else die. */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	struct ctx *c = cur;

	(void)si;
	(void)uc;
	if (c && c->armed) {
		c->armed = 0;
		c->sig = sig;
		siglongjmp(c->jb, 1);
	}
	signal(sig, SIG_DFL);
}

static void catch_faults(void)
{
	struct sigaction sa = {
		.sa_sigaction = on_fault,
		.sa_flags = SA_SIGINFO | SA_NODEFER,
	};

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int guarded(struct ctx *c, void (*fn)(struct ctx *c, void *arg), void *arg)
{
	c->sig = 0;
	if (!sigsetjmp(c->jb, 1)) {
		c->armed = 1;
		fn(c, arg);
		c->armed = 0;
	}
	return c->sig;
}

uint64_t event_id(int fd)
{
	uint64_t id = 0;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id))
		return 0;
	return id;
}

/* A random slot of one of @kinds (a mask of 1 << OBJ_*), copied to @out. */
int obj_pick_flags(struct ctx *c, unsigned int kinds, unsigned int flags,
		   struct obj *out)
{
	struct proc *p = c->p;
	int i, s, start = rnd(&c->rng, MAX_OBJS), slot = -1;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < MAX_OBJS; i++) {
		s = (start + i) % MAX_OBJS;
		if ((kinds & (1U << p->obj[s].kind)) &&
		    (p->obj[s].flags & flags) == flags) {
			*out = p->obj[s];
			slot = s;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return slot;
}

int obj_pick(struct ctx *c, unsigned int kinds, struct obj *out)
{
	return obj_pick_flags(c, kinds, 0, out);
}

/* Is slot @slot still what obj_pick() saw?  If not, a thread raced us. */
bool obj_same(struct ctx *c, int slot, const struct obj *o)
{
	bool same;

	pthread_mutex_lock(&c->p->lock);
	same = c->p->obj[slot].gen == o->gen &&
	       c->p->obj[slot].kind == o->kind;
	pthread_mutex_unlock(&c->p->lock);
	return same;
}

/* Keep @fd in the table; closes it if the table is full. */
int obj_add(struct proc *p, enum obj_kind kind, int fd, unsigned int flags,
	    uint64_t id)
{
	int s;

	pthread_mutex_lock(&p->lock);
	for (s = 0; s < MAX_OBJS; s++)
		if (p->obj[s].kind == OBJ_FREE)
			break;
	if (s < MAX_OBJS) {
		p->obj[s] = (struct obj){ .kind = kind, .fd = fd,
			.gen = ++p->gen, .flags = flags, .id = id };
	}
	pthread_mutex_unlock(&p->lock);
	if (s == MAX_OBJS) {
		close(fd);
		return -1;
	}
	return s;
}

/* Take a random object of @kinds out of the table (to close it). */
int obj_take(struct ctx *c, unsigned int kinds, struct obj *out)
{
	struct proc *p = c->p;
	int i, s, start = rnd(&c->rng, MAX_OBJS);

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < MAX_OBJS; i++) {
		s = (start + i) % MAX_OBJS;
		if (kinds & (1U << p->obj[s].kind)) {
			*out = p->obj[s];
			p->obj[s].kind = OBJ_FREE;
			p->obj[s].gen = ++p->gen;
			pthread_mutex_unlock(&p->lock);
			return s;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return -1;
}

int map_add(struct proc *p, const struct map *m)
{
	int s;

	pthread_mutex_lock(&p->lock);
	for (s = 0; s < MAX_MAPS; s++)
		if (p->map[s].kind == MAP_FREE)
			break;
	if (s < MAX_MAPS) {
		p->map[s] = *m;
		p->map[s].garbles = garbles_of(m->id);
	}
	pthread_mutex_unlock(&p->lock);
	if (s == MAX_MAPS) {
		munmap(m->addr, m->len);
		return -1;
	}
	return s;
}

/* A random mapping of @kinds (1 << MAP_*); the caller holds p->lock. */
int map_pick(struct ctx *c, unsigned int kinds)
{
	int i, s, start = rnd(&c->rng, MAX_MAPS);

	for (i = 0; i < MAX_MAPS; i++) {
		s = (start + i) % MAX_MAPS;
		if (kinds & (1U << c->p->map[s].kind))
			return s;
	}
	return -1;
}

/* Do we map the AUX pages of event @id (caller holds p->lock)? */
bool map_holds(struct proc *p, uint64_t id, unsigned int kinds)
{
	int s;

	if (!id)
		return false;
	for (s = 0; s < MAX_MAPS; s++)
		if ((kinds & (1U << p->map[s].kind)) && p->map[s].id == id)
			return true;
	return false;
}

static unsigned int total_weight;

static unsigned int weight(int i)
{
	return sh->op_mask & (1ULL << i) ? ops[i].weight : 0;
}

static int pick_op(struct ctx *c)
{
	unsigned int r;
	int i;

	if (!total_weight)
		for (i = 0; i < nr_ops; i++)
			total_weight += weight(i);
	r = rnd(&c->rng, total_weight);
	for (i = 0; i < nr_ops; i++) {
		if (r < weight(i))
			return i;
		r -= weight(i);
	}
	return 0;
}

void run_ops(struct ctx *c, uint64_t budget)
{
	uint64_t i;

	cur = c;
	for (i = 0; i < budget && !sh->stop; i++) {
		c->op = pick_op(c);
		c->n++;
		c->what[0] = '\0';
		ops[c->op].fn(c);
		__atomic_add_fetch(&sh->ops, 1, __ATOMIC_RELAXED);
		sh->progress[c->p->worker] = now_ms();
	}
}

/* Wait for the children of @p: those that are done, or all. */
void reap_kids(struct proc *p, bool wait)
{
	int i, status;
	pid_t r;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < MAX_KIDS; i++) {
		if (!p->kids[i])
			continue;
		r = waitpid(p->kids[i], &status, wait ? 0 : WNOHANG);
		if (r == p->kids[i] || (r < 0 && errno == ECHILD)) {
			if (r > 0 && (!WIFEXITED(status) ||
				      WEXITSTATUS(status))) {
				pthread_mutex_unlock(&p->lock);
				lognote("child died",
					"a child (pid %d) ended with status 0x%x",
					(int)p->kids[i], status);
				pthread_mutex_lock(&p->lock);
			}
			p->kids[i] = 0;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

/*
 * Every actor (a thread of a process of a life) logs its ops to a file of
 * its own, <logdir>/<pid>.<thread>.log, each line stamped with the clock:
 * one file for all would serialize them on its inode lock.  sort -n merges
 * them.
 */
void open_log(struct ctx *c)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%d.%d.log", c->p->logdir,
		 (int)getpid(), c->tno);
	c->logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static void proc_init(struct proc *p)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutex_init(&p->lock, &a);
}

/* Close or unmap everything in a random order, or leave it to exit(). */
static void proc_end(struct ctx *c)
{
	struct proc *p = c->p;
	int i, n, order[MAX_OBJS + MAX_MAPS];

	reap_kids(p, true);
	if (one_in(&c->rng, 2))
		return;
	n = MAX_OBJS + MAX_MAPS;
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		int j = rnd(&c->rng, i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++) {
		int k = order[i];

		if (k < MAX_OBJS) {
			if (p->obj[k].kind != OBJ_FREE)
				close(p->obj[k].fd);
			p->obj[k].kind = OBJ_FREE;
		} else if (p->map[k - MAX_OBJS].kind != MAP_FREE) {
			munmap(p->map[k - MAX_OBJS].addr,
			       p->map[k - MAX_OBJS].len);
			p->map[k - MAX_OBJS].kind = MAP_FREE;
		}
	}
}

struct thread_arg {
	struct ctx c;
	uint64_t budget;
	volatile int done;
};

static struct thread_arg *thread_args[MAX_THREADS];

static void *thread_main(void *arg)
{
	struct thread_arg *ta = arg;
	struct ctx *c = &ta->c;
	int slot = c->p->worker * MAX_THREADS + c->tno;

	if (!c->p->depth) {
		sh->targets[slot].uid = c->p->uid;
		sh->targets[slot].pid = gettid();
	}
	open_log(c);
	run_ops(c, ta->budget);
	if (c->logfd >= 0)
		close(c->logfd);
	if (!c->p->depth)
		sh->targets[slot].pid = 0;
	ta->done = 1;
	return NULL;
}

/* Threads that are done are joined; returns a free thread slot or -1. */
static int join_threads(struct proc *p, bool all)
{
	int i, free_slot = -1;

	for (i = 1; i < MAX_THREADS; i++) {
		struct thread_arg *ta = thread_args[i];

		if (ta && (all || ta->done)) {
			pthread_join(p->threads[i], NULL);
			free(ta);
			thread_args[i] = NULL;
		}
		if (!thread_args[i] && free_slot < 0)
			free_slot = i;
	}
	return free_slot;
}

void op_thread(struct ctx *c)
{
	struct thread_arg *ta;
	int i;

	/*
	 * Only a worker's first thread starts and joins threads: two vCPUs
	 * under TCG have room for a few dozen actors, not hundreds.
	 */
	if (c->tno || c->p->depth) {
		idle(c, "only a worker's first thread");
		return;
	}
	i = join_threads(c->p, false);
	if (i < 0) {
		idle(c, "all threads run");
		return;
	}
	ta = calloc(1, sizeof(*ta));
	ta->c.p = c->p;
	ta->c.tno = i;
	rng_seed(&ta->c.rng, rnd64(&c->rng));
	ta->budget = 20 + rnd(&c->rng, 300);
	say(c, "thread %d budget %llu", i, (unsigned long long)ta->budget);
	thread_args[i] = ta;
	if (pthread_create(&c->p->threads[i], NULL, thread_main, ta)) {
		thread_args[i] = NULL;
		free(ta);
		done(c, EAGAIN);
		return;
	}
	done(c, 0);
}

/*
 * A child: fork() and run ops on the inherited table (mappings are not
 * inherited, VM_DONTCOPY, unless MADV_DOFORK took), or execve() this
 * binary with the fds handed over in FUZZ_FDS.
 */
pid_t spawn_child(struct ctx *c, uint64_t budget, bool do_exec)
{
	struct proc *p = c->p;
	uint64_t seed = rnd64(&c->rng);
	int i, k;
	pid_t pid;

	pthread_mutex_lock(&p->lock);
	for (k = 0; k < MAX_KIDS; k++)
		if (!p->kids[k])
			break;
	if (k == MAX_KIDS || p->depth >= MAX_DEPTH) {
		pthread_mutex_unlock(&p->lock);
		return 0;
	}
	pid = fork();
	if (pid) {
		if (pid > 0)
			p->kids[k] = pid;
		pthread_mutex_unlock(&p->lock);
		return pid;
	}

	/* the child: only this thread exists in it */
	proc_init(p);

	memset(p->kids, 0, sizeof(p->kids));
	memset(thread_args, 0, sizeof(thread_args));
	p->nr_threads = 0;
	p->depth++;
	for (i = 0; i < MAX_MAPS; i++)
		if (!p->map[i].dofork)
			p->map[i].kind = MAP_FREE;
	if (do_exec) {
		char arg[6][32], fds[MAX_OBJS * 48] = "", *a[9];
		int n = 0;

		for (i = 0; i < MAX_OBJS; i++)
			if (p->obj[i].kind != OBJ_FREE)
				n += snprintf(fds + n, sizeof(fds) - n,
					      "%d:%d:%u:%llx,", p->obj[i].kind,
					      p->obj[i].fd, p->obj[i].flags,
					      (unsigned long long)p->obj[i].id);
		setenv("FUZZ_FDS", fds, 1);
		setenv("FUZZ_LOG", p->logdir, 1);
		snprintf(arg[0], 32, "0x%llx", (unsigned long long)seed);
		snprintf(arg[1], 32, "%llu", (unsigned long long)budget);
		snprintf(arg[2], 32, "%d", shm_fd);
		snprintf(arg[3], 32, "%d", p->worker);
		snprintf(arg[4], 32, "%d", p->life);
		snprintf(arg[5], 32, "%d", p->depth);
		a[0] = "itrace-fuzz";
		a[1] = "--child";
		for (i = 0; i < 6; i++)
			a[2 + i] = arg[i];
		a[8] = NULL;
		execv(sh->exe, a);
		_exit(127);
	}
	{
		struct ctx cc = { .p = p };

		open_log(&cc);
		rng_seed(&cc.rng, seed);
		run_ops(&cc, budget);
		join_threads(p, true);
		proc_end(&cc);
	}
	_exit(0);
}

void op_reap(struct ctx *c)
{
	say(c, "children");
	reap_kids(c->p, false);
	if (!c->tno)
		join_threads(c->p, false);
	done(c, 0);
}

static void proc_setup(struct proc *p)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;

	proc_init(p);
	catch_faults();
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->sock = -1;
	if (p->depth)
		return;
	p->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	len = offsetof(struct sockaddr_un, sun_path) +
	      worker_sock_name(p->worker, sa.sun_path, sizeof(sa.sun_path));
	if (p->sock >= 0 && bind(p->sock, (struct sockaddr *)&sa, len)) {
		close(p->sock);
		p->sock = -1;
	}
}

void life_main(int worker, int life, uint64_t seed, uid_t uid,
	       const char *logdir, uint64_t budget)
{
	struct proc *p = calloc(1, sizeof(*p));
	struct ctx c = { .p = p };

	p->worker = worker;
	p->life = life;
	p->uid = uid;
	p->root = !uid;
	snprintf(p->logdir, sizeof(p->logdir), "%s", logdir);
	if (uid && become_nobody()) {
		perror("become_nobody");
		_exit(1);
	}
	proc_setup(p);
	rng_seed(&c.rng, seed);
	/* drawn even when given, so that -N replays the same ops */
	if (!budget)
		budget = 100 + rnd(&c.rng, 1900);
	else
		rnd(&c.rng, 1900);
	sh->targets[worker * MAX_THREADS].uid = uid;
	sh->targets[worker * MAX_THREADS].pid = getpid();
	cur = &c;
	open_log(&c);
	dprintf(c.logfd, "life %d:%d seed 0x%016llx uid %d pid %d budget %llu\n",
		worker, life, (unsigned long long)seed, (int)uid,
		(int)getpid(), (unsigned long long)budget);
	run_ops(&c, budget);
	join_threads(p, true);
	sh->targets[worker * MAX_THREADS].pid = 0;
	proc_end(&c);
	_exit(0);
}

/*
 * "itrace-fuzz --child SEED BUDGET SHMFD WORKER LIFE DEPTH", with the fds
 * in FUZZ_FDS and the log's path in FUZZ_LOG
 */
int child_main(int argc, char **argv)
{
	struct proc *p = calloc(1, sizeof(*p));
	struct ctx c = { .p = p };
	const char *fds = getenv("FUZZ_FDS");
	uint64_t budget;

	if (argc != 8)
		return 2;
	shm_fd = atoi(argv[4]);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED,
		  shm_fd, 0);
	if (sh == MAP_FAILED)
		return 3;
	rng_seed(&c.rng, strtoull(argv[2], NULL, 0));
	budget = strtoull(argv[3], NULL, 0);
	snprintf(p->logdir, sizeof(p->logdir), "%s",
		 getenv("FUZZ_LOG") ?: "/nonexistent");
	open_log(&c);
	p->worker = atoi(argv[5]);
	p->life = atoi(argv[6]);
	p->depth = atoi(argv[7]);
	p->uid = getuid();
	p->root = !p->uid;
	proc_setup(p);
	while (fds && *fds) {
		unsigned int kind, flags;
		unsigned long long id;
		int fd, n;

		if (sscanf(fds, "%u:%d:%u:%llx,%n", &kind, &fd, &flags, &id,
			   &n) != 4)
			break;
		fds += n;
		/* PERF_FLAG_FD_CLOEXEC ones are gone */
		if (fcntl(fd, F_GETFD) < 0)
			continue;
		obj_add(p, kind, fd, flags, id);
	}
	cur = &c;
	run_ops(&c, budget);
	join_threads(p, true);
	proc_end(&c);
	return 0;
}
