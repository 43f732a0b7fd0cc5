/* SPDX-License-Identifier: GPL-2.0 */
/*
 * itrace-fuzz: random sequences over the itrace uAPI (see README).
 */
#ifndef ITRACE_FUZZ_H
#define ITRACE_FUZZ_H

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#ifndef PERF_FLAG_FD_ITRACE
#define PERF_FLAG_FD_ITRACE	(1UL << 4)
#endif
#ifndef RLIMIT_ITRACE
#define RLIMIT_ITRACE		16
#endif
#define FUZZ_NLIMITS		17	/* RLIM_NLIMITS with RLIMIT_ITRACE */
#ifndef PERF_RECORD_ITRACE_LOST
#define PERF_RECORD_ITRACE_LOST	23
#endif
#define ITRACE_DUMP_MAX		(1ULL << 30)	/* largest RLIMIT_ITRACE */

#define NOBODY		65534
#define MAX_WORKERS	8
#define MAX_OBJS	24	/* fds a process keeps in its table */
#define MAX_MAPS	12	/* mappings a process keeps in its table */
#define MAX_THREADS	4	/* threads of a process, the first included */
#define MAX_KIDS	2	/* fork()ed children a process waits for */
#define MAX_DEPTH	2	/* children of children, no deeper */
#define MAX_PMUS	16
#define MAX_FINDINGS	64
#define MAX_KNOWN	16
#define MAX_ERRNO	134	/* errno values counted per op */
#define NR_TARGETS	(MAX_WORKERS * MAX_THREADS)

#define FUZZ_DIR	"/tmp/itrace-fuzz"
#define CORE_DIR	FUZZ_DIR "/cores"
#define CORE_SINK_MAX	(64 << 20)	/* bytes a core_pattern pipe keeps */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The per-thread random number generator: xorshift64*. */
struct rng {
	uint64_t s;
};

static inline uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = splitmix64(seed) | 1;
}

static inline uint64_t rnd64(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n) (n > 0). */
static inline uint64_t rnd(struct rng *r, uint64_t n)
{
	return rnd64(r) % n;
}

/* True with probability 1/n. */
static inline bool one_in(struct rng *r, unsigned int n)
{
	return rnd(r, n) == 0;
}

/* The itrace PMUs and the others, as sysfs lists them. */
struct pmu_info {
	char name[32];
	int type;
	bool itrace;		/* has an itrace/ directory */
	bool kevents;		/* itrace PMU that serves core dumps (and
				 * samples): its itrace/coredump takes "1" */
	uint64_t config_mask;	/* bits of its format/ files */
};

/* The targets of prlimit() and of events on other tasks. */
struct target {
	pid_t pid;		/* a worker's process or thread, 0 if none */
	uid_t uid;
};

#define GARBLE_SLOTS	1024
#define GARBAGE_VALS	64

struct finding {
	char key[64];		/* what was found, the same for repeats */
	char example[320];	/* the first occurrence, with its op */
	unsigned int count;
};

/*
 * Shared by every process of a run (a memfd, inherited across fork() and
 * execve()): the counters, the findings and what the workers do.
 */
struct shared {
	pthread_mutex_t lock;	/* findings, notes */
	volatile int stop;	/* the run is over: every actor returns */
	uint64_t seed;		/* the run's seed */
	int nr_pmus;
	struct pmu_info pmus[MAX_PMUS];
	char exe[256];		/* this binary, for execve() and core_pattern */
	int nr_cpus;
	int core_pmu;		/* -c: events of the core PMU too */
	uint64_t op_mask;	/* -O: the ops that run (bit = index in ops[]) */
	uint64_t ops;				/* every op of every actor */
	uint64_t op_calls[64];
	uint64_t op_errno[64][MAX_ERRNO];	/* [0]: success */
	uint64_t op_idle[64];	/* nothing to do it on */
	uint64_t op_notes[64];	/* an errno the uAPI leaves open */
	uint64_t op_found[64];	/* findings */
	int nr_findings;
	struct finding findings[MAX_FINDINGS];
	int nr_notes;
	struct finding notes[MAX_FINDINGS];
	int nr_known;				/* -k FILE: known findings */
	struct finding known[MAX_KNOWN];	/* example: why it is known */
	unsigned int known_seen[MAX_KNOWN];
	uint64_t progress[MAX_WORKERS];	/* a clock in ms at each op */
	volatile int keep[MAX_WORKERS];	/* keep the life's log */
	volatile pid_t show[MAX_WORKERS];	/* the supervisor dumps its stacks */
	struct target targets[NR_TARGETS];
	uint64_t crashes, cores, itrace_notes;
	/*
	 * Garbage written into a user page, by event id (a slot per id
	 * modulo GARBLE_SLOTS): another process that maps the same buffer
	 * (the event's fd came with fork() or SCM_RIGHTS) sees it too.
	 * alias: the other event of a PERF_EVENT_IOC_SET_OUTPUT, whose
	 * mappings show the same buffer.
	 */
	uint32_t garbles[GARBLE_SLOTS];
	uint64_t alias[GARBLE_SLOTS];
	/*
	 * The last GARBAGE_VALS values op_garbage() wrote, whatever the
	 * mapping: a mapping the slots above do not tie to the garbled one
	 * (an id unknown, a chain of SET_OUTPUT) can still show them.
	 */
	uint64_t garbage_vals[GARBAGE_VALS];
	uint32_t garbage_n;
};

extern struct shared *sh;
extern int shm_fd;

/* Garbage wrote @v into some user page, recently (op_garbage()) */
static inline bool garbage_value(uint64_t v)
{
	int i;

	for (i = 0; i < GARBAGE_VALS; i++)
		if (__atomic_load_n(&sh->garbage_vals[i], __ATOMIC_ACQUIRE) == v)
			return true;
	return false;
}

/* Garbage written so far into the user pages of event @id's buffer */
static inline uint32_t garbles_of(uint64_t id)
{
	return __atomic_load_n(&sh->garbles[id % GARBLE_SLOTS],
			       __ATOMIC_ACQUIRE);
}

/* Garbage was written into event @id's user page: for every mapper */
static inline void garbled_now(uint64_t id)
{
	uint64_t alias = __atomic_load_n(&sh->alias[id % GARBLE_SLOTS],
					 __ATOMIC_ACQUIRE);

	__atomic_add_fetch(&sh->garbles[id % GARBLE_SLOTS], 1,
			   __ATOMIC_RELEASE);
	if (alias)
		__atomic_add_fetch(&sh->garbles[alias % GARBLE_SLOTS], 1,
				   __ATOMIC_RELEASE);
}

enum obj_kind { OBJ_FREE, OBJ_EVENT, OBJ_TFD, OBJ_SYSFS };
#define K_EVENT		(1U << OBJ_EVENT)
#define K_TFD		(1U << OBJ_TFD)
#define K_SYSFS		(1U << OBJ_SYSFS)
#define K_ANY		(K_EVENT | K_TFD | K_SYSFS)

#define EV_ITRACE	0x01	/* of an itrace PMU */
#define EV_INHERIT	0x02	/* per-task event (cpu -1) with attr.inherit */
#define EV_CPU		0x04	/* bound to a CPU */
#define EV_SW		0x08	/* a software event */

struct obj {
	enum obj_kind kind;
	int fd;
	unsigned int gen;	/* changes whenever the slot changes */
	unsigned int flags;	/* EV_* */
	uint64_t id;		/* PERF_EVENT_IOC_ID of the event, 0 unknown */
};

enum map_kind { MAP_FREE, MAP_RB, MAP_AUX, MAP_TRACE };

#define M_RB		(1U << MAP_RB)
#define M_AUX		(1U << MAP_AUX)
#define M_TRACE		(1U << MAP_TRACE)
#define M_ANY		(M_RB | M_AUX | M_TRACE)

struct map {
	enum map_kind kind;
	char *addr;
	size_t len;
	int prot;		/* now (mprotect() may change it) */
	bool overwrite;		/* mapped read-only: overwrite mode */
	uint64_t id;		/* the event's id, 0 unknown */
	int fd;			/* made from (it may be closed since) */
	bool garbled;		/* we wrote garbage into its user page */
	uint32_t garbles;	/* garbles_of(id) when mapped */
	bool dofork;		/* MADV_DOFORK succeeded: fork() copies it */
};

/* A process of the run: a worker's life, or a child it made. */
struct proc {
	pthread_mutex_t lock;	/* obj[], map[], kids[] */
	struct obj obj[MAX_OBJS];
	struct map map[MAX_MAPS];
	unsigned int gen;
	pid_t kids[MAX_KIDS];
	pthread_t threads[MAX_THREADS];
	int nr_threads;		/* started besides the first */
	int worker;		/* 0..; its life's slot in sh */
	int life;
	int depth;		/* 0: a worker, >0: a child of one */
	uid_t uid;
	int sock;		/* SCM_RIGHTS: receives on worker's name */
	int epfd;
	char logdir[300];	/* the life's op logs, one per actor */
	bool root;
	bool crash_child;
};

/* One actor: a thread of a process of the run. */
struct ctx {
	struct proc *p;
	struct rng rng;
	int tno;		/* thread number in the process */
	int op;			/* index in ops[] of the op in progress */
	uint64_t n;		/* ops done */
	char what[256];		/* the op in progress, for the log */
	const char *tag;	/* what a finding's key adds to the op's name */
	int logfd;		/* this actor's op log */
	sigjmp_buf jb;
	volatile sig_atomic_t armed;	/* a fault jumps to jb */
	volatile sig_atomic_t sig;	/* the fault that jumped */
};

struct op {
	const char *name;
	void (*fn)(struct ctx *c);
	unsigned int weight;
};

extern const struct op ops[];
extern const int nr_ops;

/* Outcomes (fuzz.c). */
void say(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void done(struct ctx *c, int err);
void idle(struct ctx *c, const char *why);
void expect(struct ctx *c, int err, bool strict, const int *set);
void finding(struct ctx *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void lognote(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
uint64_t now_ms(void);
const char *errname(int err);

/*
 * The documented outcome of an op: STRICT(c, err, ...) when the uAPI
 * document defines it (anything else is a finding), LOOSE(c, err, ...)
 * when it only lists what may happen (anything else is counted as a note:
 * the uAPI leaves the case open).  0 in the list stands for success.
 */
#define STRICT(c, err, ...) \
	expect(c, err, true, (const int []){ __VA_ARGS__, -1 })
#define LOOSE(c, err, ...) \
	expect(c, err, false, (const int []){ __VA_ARGS__, -1 })

/* 0 or errno of a system call's return value */
static inline int err_of(long ret)
{
	extern int *__errno_location(void);

	return ret < 0 ? *__errno_location() : 0;
}

/* The table of a process (worker.c). */
int obj_pick(struct ctx *c, unsigned int kinds, struct obj *out);
int obj_pick_flags(struct ctx *c, unsigned int kinds, unsigned int flags,
		   struct obj *out);
bool obj_same(struct ctx *c, int slot, const struct obj *o);
int obj_add(struct proc *p, enum obj_kind kind, int fd, unsigned int flags,
	    uint64_t id);
int obj_take(struct ctx *c, unsigned int kinds, struct obj *out);
int map_add(struct proc *p, const struct map *m);
int map_pick(struct ctx *c, unsigned int kinds);
bool map_holds(struct proc *p, uint64_t id, unsigned int kinds);
uint64_t event_id(int fd);
void run_ops(struct ctx *c, uint64_t budget);
pid_t spawn_child(struct ctx *c, uint64_t budget, bool do_exec);
void reap_kids(struct proc *p, bool wait);
int child_main(int argc, char **argv);
void life_main(int worker, int life, uint64_t seed, uid_t uid,
	       const char *logdir, uint64_t budget);
void open_log(struct ctx *c);
int become_nobody(void);
int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags);
long page_size(void);

/* Run fn(arg); returns the signal (SIGSEGV, SIGBUS) it got, or 0. */
int guarded(struct ctx *c, void (*fn)(struct ctx *c, void *arg), void *arg);
struct ctx *self_ctx(void);

/* Ops (ops_fd.c, ops_mm.c, ops_proc.c). */
void op_open_pt(struct ctx *c);
void op_open_sw(struct ctx *c);
void op_open_other(struct ctx *c);
void op_tfd(struct ctx *c);
void op_tfd_bad(struct ctx *c);
void op_close(struct ctx *c);
void op_dup(struct ctx *c);
void op_ioctl_tfd(struct ctx *c);
void op_ioctl_event(struct ctx *c);
void op_set_output(struct ctx *c);
void op_poll(struct ctx *c);
void op_epoll(struct ctx *c);
void op_rw(struct ctx *c);
void op_scm_send(struct ctx *c);
void op_scm_recv(struct ctx *c);
void op_mmap_rb(struct ctx *c);
void op_mmap_aux(struct ctx *c);
void op_mmap_trace(struct ctx *c);
void op_mmap_bad(struct ctx *c);
void op_munmap(struct ctx *c);
void op_munmap_part(struct ctx *c);
void op_mremap(struct ctx *c);
void op_mprotect(struct ctx *c);
void op_madvise(struct ctx *c);
void op_garbage(struct ctx *c);
void op_poke_trace(struct ctx *c);
void op_drain(struct ctx *c);
void op_spin(struct ctx *c);
void op_fork(struct ctx *c);
void op_exec(struct ctx *c);
void op_reap(struct ctx *c);
void op_thread(struct ctx *c);
void op_prlimit(struct ctx *c);
void op_rlimit_idioms(struct ctx *c);
void op_crash(struct ctx *c);
void op_sysfs(struct ctx *c);
void op_sysctl(struct ctx *c);

void spin(unsigned long n);
void dump_tasks(pid_t pid, int fd);
int core_sink(int argc, char **argv);
int worker_sock_name(int worker, char *buf, size_t len);

#endif /* ITRACE_FUZZ_H */
