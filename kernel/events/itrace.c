// SPDX-License-Identifier: GPL-2.0
/*
 * itrace: the trace fd of an instruction flow tracing event
 *
 * Hardware instruction trace (Intel PT and the like) produces far more data
 * than any other perf event, and decoding it costs orders of magnitude more
 * than producing it, so it is exported to user space zero-copy and decoded
 * there. perf already carries such data in the AUX area of an event's
 * buffer. The trace fd maps that same AUX area through a file of its own:
 *
 *	fd  = perf_event_open(&attr, pid, cpu, -1, 0);	(an itrace PMU)
 *	mmap(NULL, (1 + 2^m) pages, ..., fd, 0);	perf stream: sideband
 *	tfd = perf_event_open(NULL, -1, -1, fd, PERF_FLAG_FD_ITRACE);
 *	mmap(NULL, (1 + 2^n) pages, ..., tfd, 0);	the trace
 *
 * Page 0 of the trace fd mapping is a struct perf_event_mmap_page of its own
 * whose data_offset, data_size, data_head and data_tail describe the trace
 * in pages 1..2^n, so a reader handles the trace exactly as it handles a
 * perf stream. The event's perf stream keeps the sideband (MMAP, COMM, AUX
 * records) the decoder needs.
 *
 * The AUX pages hang off the event's perf buffer, as with a mapping at
 * aux_offset of the event fd; the two are exclusive. While a trace fd owns
 * the AUX pages, the AUX head and tail that perf_aux_output_{begin,end}()
 * share with user space live in the trace fd's user page (see
 * perf_buffer::aux_user_head), and the event fd does not map them.
 *
 * A writable mapping stops tracing when the buffer is full, until the
 * reader moves data_tail and enables the event again; a read-only mapping
 * overwrites the oldest trace (the AUX "snapshot" mode).
 */

#include <linux/anon_inodes.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/itrace.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <linux/rculist.h>
#include <linux/security.h>
#include <linux/slab.h>

#include "internal.h"
#include "itrace_internal.h"

/**
 * struct itrace_file - what a trace fd refers to
 * @event_file: the event's file; the reference keeps @event alive for as
 *	long as the trace fd and its mappings exist, whatever is closed first
 * @event: the event whose AUX pages the trace fd maps
 */
struct itrace_file {
	struct file		*event_file;
	struct perf_event	*event;
};

/**
 * struct itrace_pmu - a PMU registered with itrace_pmu_register()
 * @list: on itrace_pmus
 * @pmu: the PMU
 * @ops: what the itrace core asks of it
 * @attr_update: the PMU's own pmu::attr_update, restored when it leaves
 */
struct itrace_pmu {
	struct list_head		list;
	struct pmu			*pmu;
	const struct itrace_pmu_ops	*ops;
	const struct attribute_group	**attr_update;
};

/* Registered itrace PMUs: RCU readers, writers under itrace_pmus_lock */
DEFINE_MUTEX(itrace_pmus_lock);
static LIST_HEAD(itrace_pmus);

/*
 * The PMU's entry, NULL if it is not registered. Under itrace_pmus_lock,
 * or rcu_read_lock() for as long as the entry is used.
 */
static struct itrace_pmu *itrace_pmu_find(struct pmu *pmu)
{
	struct itrace_pmu *ip;

	list_for_each_entry_rcu(ip, &itrace_pmus, list,
				lockdep_is_held(&itrace_pmus_lock))
		if (ip->pmu == pmu)
			return ip;

	return NULL;
}

/**
 * itrace_pmu_register() - make a PMU's trace available through trace fds
 * @pmu: an AUX PMU, registered with perf_pmu_register()
 * @ops: what the itrace core may ask of @pmu; lives as long as @pmu
 *
 * Events of @pmu can then be passed to
 * perf_event_open(NULL, -1, -1, event_fd, PERF_FLAG_FD_ITRACE), their
 * trace kept for RLIMIT_ITRACE core dumps, and the PMU gets an itrace
 * directory in sysfs (see itrace_sysfs.c). The first itrace PMU with
 * ITRACE_PMU_KEVENTS serves core dumps until sysfs selects another; one
 * with ITRACE_PMU_SECONDARY only until another registers.
 *
 * Trace fds may be mapped in both modes, so the driver must count every
 * byte of an overwrite-mode buffer, wraps included, as its AUX head:
 * see itrace_aux_counts_wraps() and itrace_aux_publish().
 *
 * Context: process context, after perf_pmu_register() succeeded. Takes
 * itrace_pmus_lock.
 * Return: 0 on success, -EINVAL if @pmu has no AUX buffer support
 * (pmu::setup_aux and pmu::free_aux), -EEXIST if it is registered
 * already, -ENOMEM if memory runs out, or the error of sysfs.
 */
int itrace_pmu_register(struct pmu *pmu, const struct itrace_pmu_ops *ops)
{
	struct itrace_pmu *ip;
	int ret;

	if (!pmu->setup_aux || !pmu->free_aux)
		return -EINVAL;

	ip = kzalloc(sizeof(*ip), GFP_KERNEL);
	if (!ip)
		return -ENOMEM;
	ip->pmu = pmu;
	ip->ops = ops;

	mutex_lock(&itrace_pmus_lock);
	ret = -EEXIST;
	if (itrace_pmu_find(pmu))
		goto unlock;

	ret = itrace_sysfs_add(pmu, &ip->attr_update);
	if (ret)
		goto unlock;

	pmu->capabilities |= PERF_PMU_CAP_ITRACE_FD;
	list_add_tail_rcu(&ip->list, &itrace_pmus);
	if (ops && (ops->features & ITRACE_PMU_KEVENTS))
		itrace_coredump_pmu_default(pmu, ops->features &
					    ITRACE_PMU_SECONDARY);
	ip = NULL;
unlock:
	mutex_unlock(&itrace_pmus_lock);
	kfree(ip);

	return ret;
}
EXPORT_SYMBOL_GPL(itrace_pmu_register);

/**
 * itrace_pmu_unregister() - undo itrace_pmu_register()
 * @pmu: a PMU registered with itrace_pmu_register()
 *
 * New trace fds and kernel-owned trace events of @pmu are refused from
 * now on; if @pmu served core dumps, the next itrace PMU does, if any.
 * Existing events of @pmu keep their buffers: they hold a reference to
 * the PMU's module (perf_init_event()), which therefore cannot go away
 * before them.
 *
 * Context: process context, before perf_pmu_unregister(). Takes
 * itrace_pmus_lock, waits for an RCU grace period.
 */
void itrace_pmu_unregister(struct pmu *pmu)
{
	struct itrace_pmu *ip;

	mutex_lock(&itrace_pmus_lock);
	ip = itrace_pmu_find(pmu);
	if (ip) {
		list_del_rcu(&ip->list);
		pmu->capabilities &= ~PERF_PMU_CAP_ITRACE_FD;
		itrace_coredump_pmu_gone(pmu, itrace_first_pmu());
		itrace_sysfs_remove(pmu, ip->attr_update);
	}
	mutex_unlock(&itrace_pmus_lock);

	if (!ip)
		return;

	/* Readers of itrace_pmus (itrace_event_ops()) are done with it */
	synchronize_rcu();
	kfree(ip);
}
EXPORT_SYMBOL_GPL(itrace_pmu_unregister);

/**
 * itrace_first_pmu() - the first registered itrace PMU that can serve
 *	core dumps (ITRACE_PMU_KEVENTS), one without ITRACE_PMU_SECONDARY
 *	if there is one
 *
 * Context: itrace_pmus_lock held.
 * Return: the PMU, or NULL if there is none.
 */
struct pmu *itrace_first_pmu(void)
{
	struct pmu *secondary = NULL;
	struct itrace_pmu *ip;

	lockdep_assert_held(&itrace_pmus_lock);
	list_for_each_entry(ip, &itrace_pmus, list) {
		if (!ip->ops || !(ip->ops->features & ITRACE_PMU_KEVENTS))
			continue;
		if (!(ip->ops->features & ITRACE_PMU_SECONDARY))
			return ip->pmu;
		if (!secondary)
			secondary = ip->pmu;
	}

	return secondary;
}

/**
 * itrace_pmu_has() - does an itrace PMU's driver do all of @features
 * @pmu: a PMU
 * @features: ITRACE_PMU_* flags
 *
 * Context: any; lockless (RCU).
 * Return: true if @pmu is registered with itrace_pmu_register() with
 * every flag of @features in its itrace_pmu_ops::features.
 */
bool itrace_pmu_has(struct pmu *pmu, unsigned int features)
{
	struct itrace_pmu *ip;
	bool ret;

	rcu_read_lock();
	ip = itrace_pmu_find(pmu);
	ret = ip && ip->ops && (ip->ops->features & features) == features;
	rcu_read_unlock();

	return ret;
}

/**
 * itrace_event_ops() - what the itrace core may ask of an event's PMU
 * @event: an event of an itrace PMU, which holds the PMU's module
 *
 * Context: any; lockless (RCU).
 * Return: the itrace_pmu_ops of @event's PMU, NULL if it has none or left
 * itrace. They live as long as the PMU's module, so as long as @event.
 */
const struct itrace_pmu_ops *itrace_event_ops(struct perf_event *event)
{
	const struct itrace_pmu_ops *ops;
	struct itrace_pmu *ip;

	rcu_read_lock();
	ip = itrace_pmu_find(event->pmu);
	ops = ip ? ip->ops : NULL;
	rcu_read_unlock();

	return ops;
}

/**
 * itrace_aux_counts_wraps() - must the PMU count every byte in overwrite mode
 * @event: the event whose pmu::setup_aux() is running
 *
 * A trace fd's data_head counts every byte written, wraps included, in
 * both modes; in overwrite mode the PMU driver must therefore see each
 * wrap of the buffer (intel_pt: a PMI twice per lap) and report the count
 * as the AUX head. The classic AUX area at aux_offset and the buffers of
 * kernel-owned events (itrace_kevent_create()) keep mainline's meaning:
 * in overwrite mode, the position in the buffer, without interrupts.
 *
 * Context: pmu::setup_aux(), under the buffer's aux_mutex.
 * Return: true if the AUX pages being set up belong to a trace fd mapping.
 */
bool itrace_aux_counts_wraps(struct perf_event *event)
{
	struct perf_buffer *rb = event->rb;

	return rb && rb_aux_is_itrace(rb);
}
EXPORT_SYMBOL_GPL(itrace_aux_counts_wraps);

/**
 * itrace_aux_publish() - publish the count of an overwrite-mode writer
 * @handle:	the output handle of the running transaction (perf_aux_output_begin())
 * @head:	bytes written to the buffer since it was set up, wraps included
 *		(congruent to the write position modulo the buffer size)
 *
 * A PMU driver that counts every byte of a trace fd's overwrite buffer
 * (itrace_aux_counts_wraps()) calls this at the interrupts where it counts,
 * so that data_head follows the trace while the transaction goes on, not
 * only when it ends. It moves the AUX head and stores it in the mapping's
 * user page; it writes no record and wakes nobody (overwrite mode is never
 * readable by poll()). perf_aux_output_end() publishes the same count
 * again when the transaction ends. Does nothing for other buffers. As for
 * perf_aux_output_end(), the caller has made the trace bytes globally
 * visible first (intel_pt: the wmb() in pt_config_stop(), which pairs with
 * the reader's acquire of data_head).
 *
 * Context: the PMU's interrupt (NMI) or with the event's PMU disabled on
 * this CPU, between perf_aux_output_begin() and perf_aux_output_end(), the
 * only writer of the AUX head (rb->aux_nest held).
 */
void itrace_aux_publish(struct perf_output_handle *handle, unsigned long head)
{
	struct perf_buffer *rb = handle->rb;

	if (!rb || !rb->aux_overwrite || !rb_aux_is_itrace(rb))
		return;

	handle->head = head;
	rb->aux_head = head;
	WRITE_ONCE(*rb->aux_user_head, head);
}
EXPORT_SYMBOL_GPL(itrace_aux_publish);

/**
 * itrace_aux_lost() - an overwrite-mode writer lost trace
 * @handle:	the output handle of the running transaction
 *
 * A PMU driver that counts every byte of a trace fd's overwrite buffer
 * (itrace_aux_counts_wraps()) and stopped writing for a while (intel_pt:
 * at the STOP it keeps a lap after its last look at the write position,
 * when a PMI came late) calls this once it counted up to where it stopped
 * and before it starts again: the reader gets a PERF_RECORD_ITRACE_LOST at
 * the AUX head, size 0 (the trace of the stopped time is not known).
 * Does nothing for other buffers.
 *
 * Context: as itrace_aux_publish().
 */
void itrace_aux_lost(struct perf_output_handle *handle)
{
	struct perf_buffer *rb = handle->rb;

	if (!rb || !rb->aux_overwrite || !rb_aux_is_itrace(rb))
		return;

	perf_event_itrace_lost(handle->event, rb->aux_head, 0);
}
EXPORT_SYMBOL_GPL(itrace_aux_lost);

static void itrace_init_user_page(struct perf_event_mmap_page *userpg,
				  unsigned long nr_pages)
{
	/*
	 * No self-monitoring through this page (index, cap_user_* are 0):
	 * those fields stay in the event's user page.
	 */
	userpg->cap_bit0_is_deprecated = 1;
	userpg->size = offsetof(struct perf_event_mmap_page, __reserved);
	userpg->data_offset = PAGE_SIZE;
	userpg->data_size = (u64)nr_pages << PAGE_SHIFT;
}

/*
 * The mapping holds the event (through the file), one count of the event's
 * and of the buffer's mmap_count, which keep the buffer attached to the
 * event, and one of aux_mmap_count, which keeps the AUX pages and the user
 * page (vm_private_data is the buffer).
 */
static void itrace_vm_open(struct vm_area_struct *vma)
{
	struct itrace_file *itf = vma->vm_file->private_data;
	struct perf_buffer *rb = vma->vm_private_data;

	atomic_inc(&itf->event->mmap_count);
	atomic_inc(&rb->mmap_count);
	atomic_inc(&rb->aux_mmap_count);
}

static void itrace_vm_close(struct vm_area_struct *vma)
{
	struct itrace_file *itf = vma->vm_file->private_data;

	perf_mmap_put(itf->event, vma, true);
}

static vm_fault_t itrace_vm_fault(struct vm_fault *vmf)
{
	struct perf_buffer *rb = vmf->vma->vm_private_data;
	struct page *page;

	/* Only the user page is writable: user space moves data_tail. */
	if (vmf->flags & FAULT_FLAG_MKWRITE)
		return vmf->pgoff ? VM_FAULT_SIGBUS : 0;

	if (vmf->pgoff && (vmf->flags & FAULT_FLAG_WRITE))
		return VM_FAULT_SIGBUS;

	page = rb_itrace_to_page(rb, vmf->pgoff);
	if (!page)
		return VM_FAULT_SIGBUS;

	get_page(page);
	page->mapping = vmf->vma->vm_file->f_mapping;
	page->index = vmf->pgoff;
	vmf->page = page;

	return 0;
}

static int itrace_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	/* The mapping is one buffer; see perf_mmap_may_split(). */
	return -EINVAL;
}

static const struct vm_operations_struct itrace_vm_ops = {
	.open		= itrace_vm_open,
	.close		= itrace_vm_close,
	.fault		= itrace_vm_fault,
	.page_mkwrite	= itrace_vm_fault,
	.may_split	= itrace_vm_may_split,
};

/*
 * Attach AUX pages with a user page of their own to the event's buffer,
 * charged like an AUX mapping of the event fd (plus the user page).
 */
static int itrace_map_aux(struct perf_event *event, struct vm_area_struct *vma,
			  unsigned long nr_pages)
{
	long user_extra = nr_pages + 1, extra = 0;
	int flags = RING_BUFFER_ITRACE;
	struct perf_buffer *rb;
	int ret;

	mutex_lock(&event->mmap_mutex);

	/* The perf stream first: it carries the sideband and AUX records. */
	ret = -EINVAL;
	rb = event->rb;
	if (!rb)
		goto unlock;

	mutex_lock(&rb->aux_mutex);

	/* Mapped already: through this or another trace fd, or at aux_offset */
	ret = -EBUSY;
	if (rb_has_aux(rb))
		goto aux_unlock;

	/* Raced with the last munmap() of the perf stream, see perf_mmap(). */
	ret = -EINVAL;
	if (!atomic_inc_not_zero(&rb->mmap_count))
		goto aux_unlock;

	ret = -EPERM;
	if (!perf_mmap_calc_limits(vma, &user_extra, &extra))
		goto dec;

	if (vma->vm_flags & VM_WRITE)
		flags |= RING_BUFFER_WRITABLE;

	/*
	 * The AUX pages start at page 1 of the trace fd mapping: an offset
	 * no AUX mapping of the event fd can have (the perf stream is at 0,
	 * 1 + 2^n pages long).
	 */
	ret = rb_alloc_aux(rb, event, 1, nr_pages, event->attr.aux_watermark,
			   flags);
	if (ret)
		goto dec;

	itrace_init_user_page(rb->itrace_page, nr_pages);
	/* Charged to the mapper, refunded to it: see perf_mmap_put() */
	rb->aux_mmap_user = get_current_user();
	rb->aux_mmap_locked = extra;
	/*
	 * Pairs with the acquire in perf_aux_output_begin(): a writer that
	 * sees the mapping sees its pages and the trace user page.
	 */
	atomic_set_release(&rb->aux_mmap_count, 1);

	perf_mmap_account(vma, user_extra, extra);
	atomic_inc(&event->mmap_count);
	vma->vm_private_data = rb;
	goto aux_unlock;

dec:
	atomic_dec(&rb->mmap_count);
aux_unlock:
	mutex_unlock(&rb->aux_mutex);
unlock:
	mutex_unlock(&event->mmap_mutex);

	return ret;
}

/**
 * itrace_mmap() - map the trace of the event
 * @file: the trace fd
 * @vma: the new mapping: offset 0, (1 + 2^n) pages, shared
 *
 * Maps the trace fd's user page and 2^n pages of trace, which become the
 * AUX pages of the event's buffer. With PROT_WRITE, tracing stops when the
 * buffer is full (data_tail is honoured); read-only, the trace overwrites
 * itself and data_tail is ignored.
 *
 * Context: process context, mmap lock held for writing; takes the event's
 * mmap_mutex and its buffer's aux_mutex.
 * Return: 0 on success;
 * -EINVAL if the mapping is not shared, its offset is not 0, its size is
 * not 1 + a power of two pages (at least 1 + 2 pages if read-only), the
 * event is an inherited per-task event, or the event's own buffer (its
 * perf stream) is not mapped;
 * -EBUSY if the AUX pages of the event's buffer are mapped already,
 * through a trace fd or at the event fd's aux_offset;
 * -EPERM if the pages exceed the locked memory limits (perf_event_mlock_kb,
 * RLIMIT_MEMLOCK) without CAP_IPC_LOCK;
 * -ENOMEM if memory runs out;
 * -EOPNOTSUPP if the PMU cannot set up the buffer;
 * or the error of the LSM's perf_event_read hook.
 */
static int itrace_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct itrace_file *itf = file->private_data;
	struct perf_event *event = itf->event;
	unsigned long nr_pages = vma_pages(vma) - 1;
	int ret;

	/* One buffer for all children would serialize them, see perf_mmap() */
	if (event->cpu == -1 && event->attr.inherit)
		return -EINVAL;

	if (!(vma->vm_flags & VM_SHARED) || vma->vm_pgoff)
		return -EINVAL;

	if (!nr_pages || !is_power_of_2(nr_pages))
		return -EINVAL;

	/*
	 * Overwrite mode counts wraps where the output leaves a chunk of
	 * the buffer, twice per lap: see itrace_aux_counts_wraps().
	 */
	if (!(vma->vm_flags & VM_WRITE) && nr_pages < 2)
		return -EINVAL;

	if (nr_pages > INT_MAX)
		return -ENOMEM;

	ret = security_perf_event_read(event);
	if (ret)
		return ret;

	ret = itrace_map_aux(event, vma, nr_pages);
	if (ret)
		return ret;

	/*
	 * Pinned accounting is per mm: fork() must not copy the mapping.
	 * No pmu::event_mapped(): that is for self-monitoring through the
	 * event's own user page.
	 */
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &itrace_vm_ops;

	return 0;
}

/*
 * Is there trace for the reader of a stop-mode mapping: at least
 * aux_watermark bytes (perf_event_attr::aux_watermark, by default half the
 * buffer; the amount after which perf_aux_output_end() wakes the buffer's
 * waiters), or any at all once the trace stopped for want of room? A stop
 * may leave less than the watermark unread, since the driver stops at the
 * end of a region, and the reader must still come and make room.
 *
 * The writer stores itrace_lost_head before it publishes data_head; seeing
 * the new data_head with the old itrace_lost_head only delays the answer
 * to the wake-up that follows both, after which poll() looks again (the
 * wait queue's locking orders the wake-up against the waiter's test).
 * Called with the buffer's aux_mutex held, which keeps rb->itrace_page.
 */
static bool itrace_readable(struct perf_buffer *rb)
{
	struct perf_event_mmap_page *userpg = rb->itrace_page;
	unsigned long head, tail;

	if (!userpg || rb->aux_overwrite)
		return false;

	head = READ_ONCE(userpg->data_head);
	tail = READ_ONCE(userpg->data_tail);
	if (head == tail)
		return false;

	return head - tail >= rb->aux_watermark ||
	       READ_ONCE(rb->itrace_lost_head) == head;
}

/*
 * As perf_poll() for the event fd: EPOLLHUP alone once the event's task has
 * gone, else EPOLLIN when itrace_readable(). perf_output_wakeup() and the
 * event going away wake every waitq of the buffer's events.
 */
static __poll_t itrace_poll(struct file *file, poll_table *wait)
{
	struct itrace_file *itf = file->private_data;
	struct perf_event *event = itf->event;
	struct perf_buffer *rb;
	__poll_t events = 0;

	poll_wait(file, &event->waitq, wait);

	if (perf_event_is_hup(event))
		return EPOLLHUP;

	/* The mmap_mutex pins event->rb, the aux_mutex its trace mapping. */
	mutex_lock(&event->mmap_mutex);
	rb = event->rb;
	if (rb) {
		mutex_lock(&rb->aux_mutex);
		if (itrace_readable(rb))
			events = EPOLLIN | EPOLLRDNORM;
		mutex_unlock(&rb->aux_mutex);
	}
	mutex_unlock(&event->mmap_mutex);

	return events;
}

/*
 * PERF_EVENT_IOC_ENABLE and PERF_EVENT_IOC_DISABLE act on the event, as on
 * its fd: a reader in stop mode re-enables tracing after moving data_tail.
 * ENABLE also restarts an event whose PMU stopped when the buffer filled
 * while its task kept running on another CPU (_perf_event_itrace_enable()).
 */
static long itrace_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct itrace_file *itf = file->private_data;

	switch (cmd) {
	case PERF_EVENT_IOC_ENABLE:
	case PERF_EVENT_IOC_DISABLE:
		return perf_event_ioctl(itf->event, cmd, arg);
	default:
		return -ENOTTY;
	}
}

static int itrace_release(struct inode *inode, struct file *file)
{
	struct itrace_file *itf = file->private_data;

	/* No mapping is left: each holds a reference to this file. */
	fput(itf->event_file);
	kfree(itf);

	return 0;
}

static const struct file_operations itrace_fops = {
	.release		= itrace_release,
	.poll			= itrace_poll,
	.unlocked_ioctl		= itrace_ioctl,
	.compat_ioctl		= compat_ptr_ioctl,
	.mmap			= itrace_mmap,
};

/**
 * itrace_fd_open() - perf_event_open() with PERF_FLAG_FD_ITRACE
 * @attr_uptr: must be NULL: the trace fd is not a new event
 * @pid: must be -1
 * @cpu: must be -1
 * @event_fd: fd of an event of a PMU registered with itrace_pmu_register()
 * @flags: PERF_FLAG_FD_ITRACE, optionally with PERF_FLAG_FD_CLOEXEC
 *
 * Returns a new fd, the trace fd of the event: mmap() it for the trace
 * (see itrace_mmap()), ioctl() it to enable or disable the event. It holds
 * a reference to the event, which therefore lives until both fds and all
 * their mappings are gone. Owning @event_fd is all the permission needed;
 * each mmap() is checked like an mmap() of @event_fd.
 *
 * Context: process context (the perf_event_open() system call).
 * Return: the new fd on success;
 * -EINVAL if @attr_uptr is not NULL, @pid or @cpu is not -1, @flags holds
 * any other flag, or the event's PMU does not support trace fds;
 * -EBADF if @event_fd is not an open perf event fd;
 * -EMFILE or -ENFILE if out of file descriptors or files;
 * -ENOMEM if memory runs out.
 */
int itrace_fd_open(const void __user *attr_uptr, pid_t pid, int cpu,
		   int event_fd, unsigned long flags)
{
	struct itrace_file *itf;
	struct file *event_file, *file;
	int fd, ret;

	if (attr_uptr || pid != -1 || cpu != -1)
		return -EINVAL;

	if (flags & ~(PERF_FLAG_FD_ITRACE | PERF_FLAG_FD_CLOEXEC))
		return -EINVAL;

	event_file = perf_event_get(event_fd);
	if (IS_ERR(event_file))
		return PTR_ERR(event_file);

	ret = -EINVAL;
	if (!is_itrace_event(event_file->private_data))
		goto err_fput;

	ret = -ENOMEM;
	itf = kzalloc(sizeof(*itf), GFP_KERNEL);
	if (!itf)
		goto err_fput;

	itf->event_file = event_file;
	itf->event = event_file->private_data;

	fd = get_unused_fd_flags(O_RDWR |
				 (flags & PERF_FLAG_FD_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		ret = fd;
		goto err_free;
	}

	file = anon_inode_getfile("[itrace]", &itrace_fops, itf, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_fd;
	}

	fd_install(fd, file);

	return fd;

err_put_fd:
	put_unused_fd(fd);
err_free:
	kfree(itf);
err_fput:
	fput(event_file);

	return ret;
}
