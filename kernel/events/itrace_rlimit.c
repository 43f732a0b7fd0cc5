// SPDX-License-Identifier: GPL-2.0
/*
 * itrace: RLIMIT_ITRACE, the newest user-mode trace of each thread
 *
 * A process that sets RLIMIT_ITRACE to N bytes gets, for each of its
 * threads, a kernel-owned event of the core-dump PMU (itrace_coredump_pmu())
 * that traces user mode only into an overwrite-mode AUX buffer of N bytes
 * rounded up to a power-of-two number of pages. New threads and fork()
 * children get their own in copy_process(); execve() starts a fresh trace
 * for the new program; exit frees it. A core dump writes each thread's
 * buffer as an NT_ITRACE note (itrace_coredump.c).
 *
 * RLIM_INFINITY asks for no size and keeps no trace, like 0: a program
 * that raises every soft limit to its hard limit (RLIM_INFINITY by
 * default) does not start tracing by accident. Sizes above 1 GiB fail
 * with EINVAL.
 *
 * The buffers work for whoever set the limit (struct itrace_kowner): that
 * user is charged for every thread's buffer, also those made later by fork
 * and exec, and the permission checks of a user's trace event are made
 * again, as that task's process, at each fork and exec, so a policy change
 * (perf_event_paranoid, the LSM) takes effect there. A thread whose real
 * or effective uid is not the one its process had when the limit was set
 * (setuid(), a set-user-ID program), or whose program is not dumpable,
 * gets no trace.
 *
 * Locking: a process without the limit pays a static key test and a
 * lockless read of its limit on fork and exec. The state of a process
 * that has used the limit (struct itrace_proc, signal_struct::itrace) has
 * a mutex that serializes the changes of its limit, its new threads, its
 * exec, the exit of its threads and its core dump; nothing global is
 * locked while buffers are made, zeroed or copied. task_struct::itrace_dump
 * is set and taken under task_lock() as well, so that a trace is never
 * installed on a thread that is already exiting (PF_EXITING, checked under
 * the same lock).
 */

#include <linux/cred.h>
#include <linux/itrace.h>
#include <linux/jump_label.h>
#include <linux/perf_event.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "itrace_internal.h"

/* Beyond this, setrlimit() fails with EINVAL (RLIM_INFINITY keeps none). */
#define ITRACE_DUMP_MAX_BYTES	SZ_1G

/**
 * struct itrace_proc - the RLIMIT_ITRACE state of a process
 * @mutex: serializes the changes of the limit, new threads, exec and the
 *	core dump of the process, which make, swap and take the traces
 * @owner: who set the limit: charged for the buffers, and whose checks
 *	are made again at each fork and exec
 * @uid: the process's real uid when the limit was set
 * @euid: its effective uid then
 * @gen: generation of the last change of the limit
 * @new_owner: the owner of a change in progress (itrace_rlimit_begin())
 * @new_uid: the uid of the process, for the change in progress
 * @new_euid: its effective uid
 * @new_dumps: the traces a change in progress made for the threads
 * @change: a change in progress sets another size
 *
 * Made by the first change of the limit, or by fork() for a child of a
 * process with the limit set; freed with the signal_struct.
 */
struct itrace_proc {
	struct mutex		mutex;	/* serializes the traces' changes */
	struct itrace_kowner	owner;
	kuid_t			uid;
	kuid_t			euid;
	u64			gen;
	struct itrace_kowner	new_owner;
	kuid_t			new_uid;
	kuid_t			new_euid;
	struct list_head	new_dumps;
	bool			change;
};

static DEFINE_STATIC_KEY_FALSE(itrace_rlimit_used);

/* Bytes of trace per thread that a limit asks for; 0: none. */
static unsigned long itrace_limit_bytes(unsigned long rlim_cur)
{
	return rlim_cur == RLIM_INFINITY ? 0 : rlim_cur;
}

static unsigned long itrace_task_limit(struct task_struct *tsk)
{
	return itrace_limit_bytes(READ_ONCE(tsk->signal->rlim[RLIMIT_ITRACE].rlim_cur));
}

static unsigned long itrace_dump_pages(unsigned long bytes)
{
	return roundup_pow_of_two(DIV_ROUND_UP(bytes, PAGE_SIZE));
}

/* The process's state, NULL if it never used the limit */
static struct itrace_proc *itrace_proc_of(struct signal_struct *sig)
{
	/* Pairs with the cmpxchg() in itrace_proc_install() */
	return smp_load_acquire(&sig->itrace);
}

static struct itrace_proc *itrace_proc_alloc(void)
{
	struct itrace_proc *proc = kzalloc(sizeof(*proc), GFP_KERNEL);

	if (proc) {
		mutex_init(&proc->mutex);
		INIT_LIST_HEAD(&proc->new_dumps);
	}

	return proc;
}

static void itrace_proc_free(struct itrace_proc *proc)
{
	itrace_kowner_put(&proc->owner);
	kfree(proc);
}

/*
 * Make @proc the state of @sig unless it has one; return the one it has.
 * Two changes of the limit (or a change and fork()) may race to make it.
 */
static struct itrace_proc *itrace_proc_install(struct signal_struct *sig,
					       struct itrace_proc *proc)
{
	struct itrace_proc *old;

	/* Full barrier: publishes the initialized mutex and owner */
	old = cmpxchg(&sig->itrace, NULL, proc);
	if (!old)
		return proc;

	itrace_proc_free(proc);

	return old;
}

/**
 * itrace_signal_free() - free the RLIMIT_ITRACE state of a process
 * @sig: a signal_struct about to be freed
 *
 * Context: free_signal_struct(), any context.
 */
void itrace_signal_free(struct signal_struct *sig)
{
	if (sig->itrace)
		itrace_proc_free(sig->itrace);
}

static struct itrace_dump *itrace_dump_create(struct task_struct *tsk,
					      const struct itrace_kowner *owner,
					      u32 type, u64 config,
					      unsigned long nr_pages, u64 gen)
{
	struct itrace_dump *d;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);

	itrace_kowner_copy(&d->owner, owner);
	d->gen = gen;
	INIT_LIST_HEAD(&d->list);

	/* A user's own event of the PMU wins: see ITRACE_NOTE_PAUSED */
	d->event = itrace_kevent_create(&d->owner, type, config, -1, tsk,
					nr_pages);
	if (IS_ERR(d->event)) {
		ret = PTR_ERR(d->event);
		itrace_kowner_put(&d->owner);
		kfree(d);
		return ERR_PTR(ret);
	}

	return d;
}

/**
 * itrace_dump_destroy() - free a thread's trace, refund its owner
 * @d: a trace no thread refers to any more
 *
 * Context: process context, may sleep.
 */
void itrace_dump_destroy(struct itrace_dump *d)
{
	itrace_kevent_release(&d->owner, d->event);
	itrace_kowner_put(&d->owner);
	kfree(d);
}

static void itrace_dump_destroy_list(struct list_head *list)
{
	struct itrace_dump *d, *tmp;

	list_for_each_entry_safe(d, tmp, list, list) {
		list_del(&d->list);
		if (d->task)
			put_task_struct(d->task);
		itrace_dump_destroy(d);
	}
}

/*
 * Make @d the trace of @tsk and return the one it replaces, or @d itself if
 * @tsk is exiting (and would never free it).
 */
static struct itrace_dump *itrace_dump_install(struct task_struct *tsk,
					       struct itrace_dump *d)
{
	struct itrace_dump *old = d;

	task_lock(tsk);
	if (!(tsk->flags & PF_EXITING)) {
		old = tsk->itrace_dump;
		tsk->itrace_dump = d;
	}
	task_unlock(tsk);

	return old;
}

/**
 * itrace_dump_take() - take a thread's trace away from it
 * @tsk: the thread
 *
 * Context: any context that may take task_lock().
 * Return: the trace, now the caller's to free, or NULL if it had none.
 */
static struct itrace_dump *itrace_dump_take(struct task_struct *tsk)
{
	struct itrace_dump *d;

	task_lock(tsk);
	d = tsk->itrace_dump;
	tsk->itrace_dump = NULL;
	task_unlock(tsk);

	return d;
}

/*
 * May @tsk be traced for its core dumps: a dumpable program, run with the
 * real and effective uids (@uid, @euid) its process had when its limit was
 * set (a set-user-ID program or setuid() make another user's process out
 * of it, which did not ask for this).
 */
static bool itrace_task_traceable(struct task_struct *tsk, kuid_t uid,
				  kuid_t euid)
{
	const struct cred *cred;
	bool ret;

	task_lock(tsk);
	ret = tsk->mm && get_dumpable(tsk->mm) == SUID_DUMP_USER;
	task_unlock(tsk);
	if (!ret)
		return false;

	rcu_read_lock();
	cred = __task_cred(tsk);
	ret = uid_eq(cred->uid, uid) && uid_eq(cred->euid, euid);
	rcu_read_unlock();

	return ret;
}

/*
 * Do the traces of @proc work for current, with the uids @tsk's process
 * has now? Setting the same size again changes nothing then; otherwise it
 * makes current the owner, for the process's uids of now.
 */
static bool itrace_proc_owned(struct itrace_proc *proc,
			      struct task_struct *tsk)
{
	const struct cred *cred;
	bool ret;

	if (!proc->owner.cred || !uid_eq(proc->owner.cred->uid, current_uid()))
		return false;

	rcu_read_lock();
	cred = __task_cred(tsk);
	ret = uid_eq(cred->uid, proc->uid) && uid_eq(cred->euid, proc->euid);
	rcu_read_unlock();

	return ret;
}

/* The events are those itrace_kevent_create() makes */
static int itrace_rlimit_allowed(struct task_struct *tsk)
{
	struct perf_event_attr attr = { .exclude_kernel = 1 };

	return itrace_kevent_allowed(&attr, tsk);
}

/*
 * The checks do_prlimit() makes before it changes a limit, made before
 * any trace event: the hard limit may be raised only with
 * CAP_SYS_RESOURCE, and the LSM may refuse. do_prlimit() makes them again
 * under task_lock(); if they fail here, it is not called.
 */
static int itrace_prlimit_check(struct task_struct *tsk,
				const struct rlimit *new_rlim)
{
	unsigned long max = READ_ONCE(tsk->signal->rlim[RLIMIT_ITRACE].rlim_max);

	if (new_rlim->rlim_max > max && !capable(CAP_SYS_RESOURCE))
		return -EPERM;

	return security_task_setrlimit(tsk, RLIMIT_ITRACE,
				       (struct rlimit *)new_rlim);
}

/* A reference to each live user thread of @tsk's process, in @dumps. */
static int itrace_rlimit_prepare(struct task_struct *tsk,
				 struct itrace_proc *proc, u32 type,
				 u64 config, unsigned long nr_pages)
{
	unsigned int max = get_nr_threads(tsk) + 8, nr, i;
	struct task_struct **threads, *t;
	struct itrace_dump *d;
	bool more;
	int ret = 0;

again:
	threads = kvmalloc_array(max, sizeof(*threads), GFP_KERNEL);
	if (!threads)
		return -ENOMEM;

	nr = 0;
	more = false;
	rcu_read_lock();
	for_each_thread(tsk, t) {
		if (t->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER |
				PF_USER_WORKER))
			continue;
		if (nr == max) {
			more = true;
			break;
		}
		get_task_struct(t);
		threads[nr++] = t;
	}
	rcu_read_unlock();

	if (more) {
		while (nr)
			put_task_struct(threads[--nr]);
		kvfree(threads);
		max *= 2;
		goto again;
	}

	/* All of it or nothing: no retry storm for a request that cannot be */
	ret = itrace_kevent_check_memory(nr * nr_pages);

	for (i = 0; i < nr; i++) {
		d = ret ? NULL : itrace_dump_create(threads[i], &proc->new_owner,
						    type, config, nr_pages,
						    proc->gen);
		/* A thread that exits meanwhile needs no trace. */
		if (IS_ERR_OR_NULL(d)) {
			if (!IS_ERR(d) || PTR_ERR(d) != -ESRCH)
				ret = ret ?: PTR_ERR(d);
			put_task_struct(threads[i]);
			continue;
		}
		d->task = threads[i];
		list_add_tail(&d->list, &proc->new_dumps);
	}
	kvfree(threads);

	return ret;
}

/**
 * itrace_rlimit_begin() - prepare a change of RLIMIT_ITRACE
 * @tsk: a thread of the process whose limit changes
 * @new_rlim: the new limit; rlim_cur is in bytes of trace per thread, 0 or
 *	RLIM_INFINITY keeps none
 * @tx: the change, for itrace_rlimit_end()
 *
 * Makes, but does not install, one trace event per live thread of @tsk's
 * process, buffer rlim_cur bytes rounded up to a power-of-two number of
 * pages, charged to the current user, who becomes the owner of the
 * process's traces. A process that is not dumpable (see PR_SET_DUMPABLE
 * and set-user-ID execution) keeps the limit but gets its trace only at
 * its next execve() of a dumpable program. On success the process's
 * RLIMIT_ITRACE mutex stays held until
 * itrace_rlimit_end(), which must follow; on error nothing is left.
 * Setting 0 or RLIM_INFINITY always succeeds, with or without an itrace
 * PMU, unless do_prlimit()'s own checks fail.
 *
 * Context: process context, around do_prlimit() (kernel/sys.c), without
 * locks held.
 * Return: 0 on success (also when the size keeps its value and the owner
 * sets it again, which then changes nothing);
 * -EINVAL if rlim_cur exceeds rlim_max or is above ITRACE_DUMP_MAX_BYTES
 * (1 GiB) but not RLIM_INFINITY;
 * -EPERM if rlim_max is raised without CAP_SYS_RESOURCE, or the buffers
 * exceed what the current user may lock (see itrace_kevent.c);
 * the LSM's error for the new limit or for tracing;
 * -ENODEV if no itrace PMU serves core dumps;
 * -EACCES if perf_event_paranoid or ptrace access to @tsk forbids
 * tracing it;
 * -ENOMEM if the buffers of all threads exceed half of the available
 * memory, or memory runs out;
 * or the PMU's error for the event (-EBUSY, -EOPNOTSUPP ...).
 */
int itrace_rlimit_begin(struct task_struct *tsk,
			const struct rlimit *new_rlim,
			struct itrace_rlimit_tx *tx)
{
	unsigned long bytes = itrace_limit_bytes(new_rlim->rlim_cur);
	struct itrace_proc *proc;
	const struct cred *cred;
	u64 config;
	u32 type;
	int ret;

	tx->proc = NULL;

	/* do_prlimit()'s first check, then ours, before any work */
	if (new_rlim->rlim_cur > new_rlim->rlim_max ||
	    bytes > ITRACE_DUMP_MAX_BYTES)
		return -EINVAL;

	ret = itrace_prlimit_check(tsk, new_rlim);
	if (ret)
		return ret;

	/* Before any lock: it takes cpu_hotplug_lock */
	if (bytes)
		static_branch_enable(&itrace_rlimit_used);

	proc = itrace_proc_of(tsk->signal);
	if (!proc) {
		/* Nothing to undo: no thread of it ever had a trace */
		if (!bytes)
			return 0;
		proc = itrace_proc_alloc();
		if (!proc)
			return -ENOMEM;
		proc = itrace_proc_install(tsk->signal, proc);
	}

	mutex_lock(&proc->mutex);
	tx->proc = proc;
	proc->gen++;
	proc->change = itrace_task_limit(tsk) != bytes ||
		       (bytes && !itrace_proc_owned(proc, tsk));
	if (!proc->change || !bytes)
		return 0;

	ret = itrace_coredump_pmu(&type, &config);
	if (ret)
		goto unlock;

	ret = itrace_rlimit_allowed(tsk);
	if (ret)
		goto unlock;

	itrace_kowner_init(&proc->new_owner);
	rcu_read_lock();
	cred = __task_cred(tsk);
	proc->new_uid = cred->uid;
	proc->new_euid = cred->euid;
	rcu_read_unlock();

	/* Not traceable now: the limit is kept, without trace */
	if (!itrace_task_traceable(tsk, proc->new_uid, proc->new_euid))
		return 0;

	ret = itrace_rlimit_prepare(tsk, proc, type, config,
				    itrace_dump_pages(bytes));
	if (!ret)
		return 0;

	itrace_dump_destroy_list(&proc->new_dumps);
	itrace_kowner_put(&proc->new_owner);
unlock:
	proc->change = false;
	tx->proc = NULL;
	mutex_unlock(&proc->mutex);

	return ret;
}

/**
 * itrace_rlimit_end() - finish a change of RLIMIT_ITRACE
 * @tsk: the thread passed to itrace_rlimit_begin()
 * @tx: the change itrace_rlimit_begin() prepared
 * @err: 0 if do_prlimit() changed the limit, else its error: the prepared
 *	traces are dropped and the old ones stay
 *
 * Installs the prepared traces and frees every older trace of the process:
 * those they replace, and all of them when no trace is kept any more. The
 * user who made the change owns the process's traces from now on.
 *
 * Context: process context; releases the mutex itrace_rlimit_begin() took.
 */
void itrace_rlimit_end(struct task_struct *tsk, struct itrace_rlimit_tx *tx,
		       int err)
{
	struct itrace_proc *proc = tx->proc;
	struct itrace_dump *d, *tmp, *prev;
	struct task_struct *t;
	LIST_HEAD(old);

	if (!proc)
		return;

	if (err || !proc->change) {
		itrace_dump_destroy_list(&proc->new_dumps);
		itrace_kowner_put(&proc->new_owner);
		goto unlock;
	}

	/* Installed, the new traces stay on new_dumps until enabled below */
	list_for_each_entry_safe(d, tmp, &proc->new_dumps, list) {
		prev = itrace_dump_install(d->task, d);
		if (prev == d) {
			/* The thread is exiting */
			list_move(&d->list, &old);
		} else if (prev) {
			list_add(&prev->list, &old);
		}
	}

	rcu_read_lock();
	for_each_thread(tsk, t) {
		task_lock(t);
		d = t->itrace_dump;
		if (d && d->gen != proc->gen) {
			t->itrace_dump = NULL;
			list_add(&d->list, &old);
		}
		task_unlock(t);
	}
	rcu_read_unlock();

	/* new_owner is empty when no trace is kept */
	itrace_kowner_put(&proc->owner);
	proc->owner = proc->new_owner;
	proc->uid = proc->new_uid;
	proc->euid = proc->new_euid;
	memset(&proc->new_owner, 0, sizeof(proc->new_owner));

	/*
	 * The old traces go first: a new one started beside the old would
	 * find the PMU taken and pause.
	 */
	itrace_dump_destroy_list(&old);
	list_for_each_entry_safe(d, tmp, &proc->new_dumps, list) {
		list_del_init(&d->list);
		put_task_struct(d->task);
		d->task = NULL;
		perf_event_enable(d->event);
	}
unlock:
	proc->change = false;
	mutex_unlock(&proc->mutex);
}

/*
 * Give @tsk a trace if its process has the limit, it is traceable and the
 * owner may still trace it. Failing (memory, accounting, permission)
 * leaves the thread without a trace.
 */
static void itrace_task_start(struct itrace_proc *proc,
			      struct task_struct *tsk)
{
	unsigned long bytes = itrace_task_limit(tsk);
	struct itrace_dump *d, *prev;
	u64 config;
	u32 type;

	lockdep_assert_held(&proc->mutex);

	if (!bytes || !proc->owner.cred ||
	    !itrace_task_traceable(tsk, proc->uid, proc->euid))
		return;

	if (itrace_coredump_pmu(&type, &config) || itrace_rlimit_allowed(tsk))
		return;

	d = itrace_dump_create(tsk, &proc->owner, type, config,
			       itrace_dump_pages(bytes), proc->gen);
	if (IS_ERR(d))
		return;

	prev = itrace_dump_install(tsk, d);
	if (prev != d)
		perf_event_enable(d->event);
	if (prev)
		itrace_dump_destroy(prev);
}

/* fork() of a new process: its state is a copy of current's */
static struct itrace_proc *itrace_proc_fork(struct task_struct *p)
{
	struct itrace_proc *parent = itrace_proc_of(current->signal);
	struct itrace_proc *proc;

	if (!parent)
		return NULL;

	proc = itrace_proc_alloc();
	if (!proc)
		return NULL;

	mutex_lock(&parent->mutex);
	if (parent->owner.cred)
		itrace_kowner_copy(&proc->owner, &parent->owner);
	proc->uid = parent->uid;
	proc->euid = parent->euid;
	mutex_unlock(&parent->mutex);

	/* prlimit() of the child may have made its own meanwhile */
	return itrace_proc_install(p->signal, proc);
}

/**
 * itrace_task_fork() - RLIMIT_ITRACE for a new thread or process
 * @p: the new task, not yet running
 * @clone_flags: its clone flags
 *
 * A new thread or child of a process with RLIMIT_ITRACE set gets a trace of
 * its own (perf inheritance would send it into the parent's buffer). If it
 * cannot be made, @p runs without one: fork() does not fail for it.
 *
 * Context: process context, end of copy_process().
 */
void itrace_task_fork(struct task_struct *p, u64 clone_flags)
{
	struct itrace_proc *proc;

	if (!static_branch_unlikely(&itrace_rlimit_used))
		return;

	if (p->flags & (PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER))
		return;

	if (!itrace_task_limit(p))
		return;

	if (clone_flags & CLONE_THREAD)
		proc = itrace_proc_of(p->signal);
	else
		proc = itrace_proc_fork(p);
	if (!proc)
		return;

	mutex_lock(&proc->mutex);
	/* Made already by a change of the limit that saw the new thread? */
	if (!p->itrace_dump)
		itrace_task_start(proc, p);
	mutex_unlock(&proc->mutex);
}

/**
 * itrace_task_exec() - RLIMIT_ITRACE across execve()
 * @tsk: current, the only thread left, with its new mm and credentials
 *
 * The trace of the old program is dropped (it would not decode against the
 * new one); the new program starts a fresh trace if it may be traced: not
 * if it is not dumpable or runs with other uids (set-user-ID, file
 * capabilities), or if the owner of the limit may not trace it any more.
 *
 * Context: process context, begin_new_exec() after the credentials are
 * committed.
 */
void itrace_task_exec(struct task_struct *tsk)
{
	struct itrace_proc *proc;
	struct itrace_dump *d;

	if (!static_branch_unlikely(&itrace_rlimit_used))
		return;

	proc = itrace_proc_of(tsk->signal);
	if (!proc)
		return;

	mutex_lock(&proc->mutex);
	d = itrace_dump_take(tsk);
	if (d)
		itrace_dump_destroy(d);
	itrace_task_start(proc, tsk);
	mutex_unlock(&proc->mutex);
}

/**
 * itrace_task_exit() - free the thread's trace
 * @tsk: current, exiting (PF_EXITING), its core dump written
 *
 * Context: process context, do_exit() after perf_event_exit_task().
 */
void itrace_task_exit(struct task_struct *tsk)
{
	struct itrace_dump *d = itrace_dump_take_locked(tsk);

	if (d)
		itrace_dump_destroy(d);
}

/**
 * itrace_dump_take_locked() - take a thread's trace away from it
 * @tsk: a thread of the process
 *
 * As itrace_dump_take(), serialized against a change of the limit of the
 * process, which may still refer to a trace it just installed.
 *
 * Context: process context: exit, the core dump.
 * Return: the trace, now the caller's to free, or NULL.
 */
struct itrace_dump *itrace_dump_take_locked(struct task_struct *tsk)
{
	struct itrace_proc *proc;
	struct itrace_dump *d;

	if (!static_branch_unlikely(&itrace_rlimit_used))
		return NULL;

	proc = itrace_proc_of(tsk->signal);
	if (!proc)
		return NULL;

	mutex_lock(&proc->mutex);
	d = itrace_dump_take(tsk);
	mutex_unlock(&proc->mutex);

	return d;
}
