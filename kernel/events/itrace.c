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
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/itrace.h>
#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <linux/ptrace.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/user.h>
#include <linux/security.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#ifdef CONFIG_X86
#include <asm/msr.h>
#include <asm/processor.h>
#endif

#include "internal.h"

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

/* Which itrace PMU, with which config, writes the trace of core dumps. */
static DEFINE_MUTEX(itrace_pmus_lock);
static struct pmu *itrace_dump_pmu;
static u64 itrace_dump_config;

/*
 * sysfs: /sys/bus/event_source/devices/<pmu>/itrace/, a group that
 * itrace_pmu_register() adds to pmu::attr_update. Its files say which itrace
 * PMU, with which config, writes the trace of RLIMIT_ITRACE core dumps:
 *
 *	coredump		1 on the PMU that serves core dumps, else 0;
 *				writing 1 selects this PMU (config 0)
 *	coredump_config		that PMU's perf_event_attr::config, in hex
 *
 * Only root writes them; a config must make a valid event of the PMU.
 */
static ssize_t coredump_show(struct device *dev,
			     struct device_attribute *attr, char *page)
{
	struct pmu *pmu = dev_get_drvdata(dev);
	bool selected;

	mutex_lock(&itrace_pmus_lock);
	selected = itrace_dump_pmu == pmu;
	mutex_unlock(&itrace_pmus_lock);

	return sysfs_emit(page, "%d\n", selected);
}

static ssize_t coredump_store(struct device *dev,
			      struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct pmu *pmu = dev_get_drvdata(dev);
	unsigned int val;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;

	ret = kstrtouint(buf, 0, &val);
	if (ret)
		return ret;

	/* Some PMU always serves core dumps: select another to move it. */
	if (val != 1)
		return -EINVAL;

	mutex_lock(&itrace_pmus_lock);
	if (itrace_dump_pmu != pmu) {
		itrace_dump_pmu = pmu;
		itrace_dump_config = 0;
	}
	mutex_unlock(&itrace_pmus_lock);

	return count;
}
static DEVICE_ATTR_RW(coredump);

static ssize_t coredump_config_show(struct device *dev,
				    struct device_attribute *attr, char *page)
{
	struct pmu *pmu = dev_get_drvdata(dev);
	ssize_t ret = -ENODATA;

	mutex_lock(&itrace_pmus_lock);
	if (itrace_dump_pmu == pmu)
		ret = sysfs_emit(page, "%#llx\n", itrace_dump_config);
	mutex_unlock(&itrace_pmus_lock);

	return ret;
}

/*
 * The attributes of a kernel-owned trace event (itrace_kevent_create()):
 * user mode only, created disabled until its buffer is there.
 */
static void itrace_kevent_attr(struct perf_event_attr *attr, struct pmu *pmu,
			       u64 config)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = pmu->type;
	attr->size = sizeof(*attr);
	attr->config = config;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

/*
 * Can @config make an event of @pmu? Ask the PMU: create a disabled event
 * of the writer's task, as a core dump would for a task, and free it.
 */
static int itrace_check_config(struct pmu *pmu, u64 config)
{
	struct perf_event_attr attr;
	struct perf_event *event;

	itrace_kevent_attr(&attr, pmu, config);
	event = perf_event_create_kernel_trace(&attr, -1, current);
	if (IS_ERR(event))
		return PTR_ERR(event) == -ENOENT ||
		       PTR_ERR(event) == -EOPNOTSUPP ? -EINVAL : PTR_ERR(event);

	perf_event_release_kernel(event);

	return 0;
}

static ssize_t coredump_config_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	struct pmu *pmu = dev_get_drvdata(dev);
	u64 config;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;

	ret = kstrtou64(buf, 16, &config);
	if (ret)
		return ret;

	ret = itrace_check_config(pmu, config);
	if (ret)
		return ret;

	/* The config is that of the selected PMU: select it first. */
	ret = -EINVAL;
	mutex_lock(&itrace_pmus_lock);
	if (itrace_dump_pmu == pmu) {
		itrace_dump_config = config;
		ret = count;
	}
	mutex_unlock(&itrace_pmus_lock);

	return ret;
}
static DEVICE_ATTR_RW(coredump_config);

static struct attribute *itrace_pmu_attrs[] = {
	&dev_attr_coredump.attr,
	&dev_attr_coredump_config.attr,
	NULL,
};

static const struct attribute_group itrace_pmu_group = {
	.name	= "itrace",
	.attrs	= itrace_pmu_attrs,
};

static const struct attribute_group *itrace_pmu_attr_update[] = {
	&itrace_pmu_group,
	NULL,
};

/*
 * Add the itrace group to the groups perf_pmu_register() will add or
 * update for @pmu; a PMU with attr_update groups of its own gets a copy of
 * its list with the itrace group at the end.
 */
static int itrace_pmu_add_sysfs(struct pmu *pmu)
{
	const struct attribute_group **groups;
	int n = 0;

	if (!pmu->attr_update) {
		pmu->attr_update = itrace_pmu_attr_update;
		return 0;
	}

	while (pmu->attr_update[n])
		n++;

	/* Never freed: itrace PMUs are built in and never go away. */
	groups = kcalloc(n + 2, sizeof(*groups), GFP_KERNEL);
	if (!groups)
		return -ENOMEM;

	memcpy(groups, pmu->attr_update, n * sizeof(*groups));
	groups[n] = &itrace_pmu_group;
	pmu->attr_update = groups;

	return 0;
}

/**
 * itrace_pmu_register() - make a PMU's trace available through trace fds
 * @pmu: an AUX PMU, before perf_pmu_register()
 *
 * Events of @pmu can then be passed to
 * perf_event_open(NULL, -1, -1, event_fd, PERF_FLAG_FD_ITRACE), and the
 * PMU gets an itrace directory in sysfs (pmu::attr_update).
 *
 * Context: process context, before @pmu is registered with perf.
 * Return: 0 on success, -EINVAL if @pmu has no AUX buffer support
 * (pmu::setup_aux and pmu::free_aux), -ENOMEM if memory runs out.
 */
int itrace_pmu_register(struct pmu *pmu)
{
	int ret;

	if (!pmu->setup_aux || !pmu->free_aux)
		return -EINVAL;

	ret = itrace_pmu_add_sysfs(pmu);
	if (ret)
		return ret;

	pmu->capabilities |= PERF_PMU_CAP_ITRACE_FD;

	/* The first itrace PMU serves core dumps until sysfs says otherwise. */
	mutex_lock(&itrace_pmus_lock);
	if (!itrace_dump_pmu) {
		itrace_dump_pmu = pmu;
		itrace_dump_config = 0;
	}
	mutex_unlock(&itrace_pmus_lock);

	return 0;
}
EXPORT_SYMBOL_GPL(itrace_pmu_register);

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
 * itrace_coredump_pmu() - the itrace PMU that serves RLIMIT_ITRACE
 * @config: set to the perf_event_attr::config of core-dump trace events
 *
 * Context: process context; takes itrace_pmus_lock.
 * Return: the PMU selected in sysfs (<pmu>/itrace/coredump), by default the
 * first registered itrace PMU; NULL if there is none. PMUs registered with
 * itrace are built in and never go away.
 */
struct pmu *itrace_coredump_pmu(u64 *config)
{
	struct pmu *pmu;

	mutex_lock(&itrace_pmus_lock);
	pmu = itrace_dump_pmu;
	*config = itrace_dump_config;
	mutex_unlock(&itrace_pmus_lock);

	return pmu;
}

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

	ret = rb_alloc_aux(rb, event, 0, nr_pages, event->attr.aux_watermark,
			   flags);
	if (ret)
		goto dec;

	itrace_init_user_page(rb->itrace_page, nr_pages);
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

/*
 * Kernel-owned trace events: the in-kernel interface for the features that
 * keep a trace without a user-space reader (RLIMIT_ITRACE core dumps,
 * below; PERF_SAMPLE_ITRACE).
 */

/**
 * itrace_kevent_create() - create a kernel-owned trace event
 * @pmu: an itrace PMU (itrace_pmu_register())
 * @config: perf_event_attr::config of the event
 * @cpu: the CPU to trace, or -1 with @task
 * @task: the task to trace, or NULL for a CPU-wide event on @cpu
 * @nr_pages: size of its buffer in pages, a power of two
 *
 * The event traces user mode only, into an overwrite-mode AUX buffer of
 * @nr_pages that keeps the newest trace, and starts enabled. It yields the
 * PMU: a user's own event of @pmu on the same task or CPU never fails with
 * EBUSY because of it, and wins when both want to run; the kernel-owned
 * event then pauses (itrace_kevent_pauses()). The caller accounts for the
 * memory and makes the permission checks a user's event would get.
 *
 * Context: process context.
 * Return: the event; ERR_PTR(-EINVAL) if @pmu is no itrace PMU or
 * @nr_pages is not a power of two, -ENOMEM, -ESRCH if @task exits, or the
 * PMU's error for the event.
 */
struct perf_event *itrace_kevent_create(struct pmu *pmu, u64 config, int cpu,
					struct task_struct *task,
					unsigned long nr_pages)
{
	struct perf_event_attr attr;
	struct perf_event *event;
	int ret;

	if (!(pmu->capabilities & PERF_PMU_CAP_ITRACE_FD) ||
	    !nr_pages || !is_power_of_2(nr_pages) || nr_pages > INT_MAX)
		return ERR_PTR(-EINVAL);

	itrace_kevent_attr(&attr, pmu, config);

	event = perf_event_create_kernel_trace(&attr, cpu, task);
	if (IS_ERR(event))
		return event;

	ret = perf_event_alloc_kernel_aux(event, nr_pages, true);
	if (ret) {
		perf_event_release_kernel(event);
		return ERR_PTR(ret);
	}

	perf_event_enable(event);

	return event;
}

/**
 * itrace_kevent_release() - stop and free a kernel-owned trace event
 * @event: from itrace_kevent_create()
 *
 * Context: process context, may sleep.
 */
void itrace_kevent_release(struct perf_event *event)
{
	perf_event_release_kernel_aux(event);
}

/**
 * itrace_kevent_size() - size of a kernel-owned trace event's buffer
 * @event: from itrace_kevent_create()
 *
 * Return: the size in bytes: the most itrace_kevent_read() copies.
 */
size_t itrace_kevent_size(struct perf_event *event)
{
	struct perf_buffer *rb = ring_buffer_get(event);
	size_t size = 0;

	if (rb) {
		size = (size_t)rb->aux_nr_pages << PAGE_SHIFT;
		ring_buffer_put(rb);
	}

	return size;
}

/**
 * itrace_kevent_pauses() - how often a kernel-owned trace event paused
 * @event: from itrace_kevent_create()
 *
 * Return: the number of times it was to be scheduled in while another
 * event held its PMU: its trace has a gap for each.
 */
u64 itrace_kevent_pauses(struct perf_event *event)
{
	return atomic64_read(&event->lost_samples);
}

/* Copy @len bytes of the AUX buffer from offset @from */
static void itrace_aux_read(struct perf_buffer *rb, void *dst,
			    unsigned long from, unsigned long len)
{
	while (len) {
		unsigned long off = offset_in_page(from);
		unsigned long n = min(len, PAGE_SIZE - off);

		memcpy(dst, rb->aux_pages[from >> PAGE_SHIFT] + off, n);
		dst += n;
		from += n;
		len -= n;
	}
}

/* Has anything been written to [@from, @to) of the AUX buffer? */
static bool itrace_aux_written(struct perf_buffer *rb, unsigned long from,
			       unsigned long to)
{
	while (from < to) {
		unsigned long off = offset_in_page(from);
		unsigned long n = min(to - from, PAGE_SIZE - off);

		if (memchr_inv(rb->aux_pages[from >> PAGE_SHIFT] + off, 0, n))
			return true;
		from += n;
	}

	return false;
}

/**
 * itrace_kevent_read() - stop a kernel-owned trace event and copy its trace
 * @event: from itrace_kevent_create()
 * @buf: where to copy, itrace_kevent_size() bytes
 * @wrapped: set if the buffer wrapped: older trace was overwritten, and the
 *	copy starts mid-stream (a decoder synchronizes on the first PSB)
 *
 * Disables @event (perf_event_enable() restarts it) and copies its trace,
 * oldest byte first. The AUX buffer is in overwrite mode, where the
 * driver reports only the offset it writes at; pages start zeroed and
 * hardware trace never ends in a run of zero bytes (PAD) as long as the
 * buffer, so trace after that offset means the buffer wrapped and the
 * trace starts there.
 *
 * Context: process context, may sleep.
 * Return: the number of bytes copied.
 */
size_t itrace_kevent_read(struct perf_event *event, void *buf, bool *wrapped)
{
	unsigned long size, head, len = 0;
	struct perf_buffer *rb;

	*wrapped = false;

	/* Synchronous: the PMU has written out where it stopped. */
	perf_event_disable(event);

	rb = ring_buffer_get(event);
	if (!rb)
		return 0;

	size = (unsigned long)rb->aux_nr_pages << PAGE_SHIFT;
	if (!size)
		goto put;
	head = READ_ONCE(rb->aux_head) & (size - 1);
	*wrapped = itrace_aux_written(rb, head, size);
	if (*wrapped) {
		itrace_aux_read(rb, buf, head, size - head);
		itrace_aux_read(rb, buf + size - head, 0, head);
		len = size;
	} else {
		itrace_aux_read(rb, buf, 0, head);
		len = head;
	}
put:
	ring_buffer_put(rb);

	return len;
}

/*
 * RLIMIT_ITRACE: the newest user-mode trace of each thread, for core dumps
 *
 * A process that sets RLIMIT_ITRACE to N bytes gets, for each of its
 * threads, a kernel-owned event of the core-dump PMU (itrace_coredump_pmu())
 * that traces user mode only into an overwrite-mode AUX buffer of N bytes
 * rounded up to a power-of-two number of pages. New threads and fork()
 * children get their own in copy_process(); execve() starts a fresh trace
 * for the new program if it is dumpable and none if it is not; exit frees
 * it. A core dump writes each thread's buffer, oldest byte first, as an
 * NT_ITRACE note after the thread's register notes (fs/binfmt_elf.c).
 *
 * Locking: itrace_rlimit_mutex serializes the changes of the limit, fork,
 * exec and core dumps, which make, swap and read the traces.
 * task_struct::itrace_dump is set and cleared under task_lock(), so exit can
 * take a thread's trace away without the mutex; a trace is never installed
 * on a thread that is already exiting (PF_EXITING, checked under the same
 * lock).
 */

/* Beyond this, setrlimit() fails with EINVAL; RLIM_INFINITY included. */
#define ITRACE_DUMP_MAX_BYTES	SZ_1G

/**
 * struct itrace_dump - a thread's trace for its core dump
 * @event: kernel-owned event, user mode only, overwrite-mode AUX buffer
 * @user: the user charged for the buffer (perf_event_mlock_kb allowance)
 * @task: the thread, while on a struct itrace_rlimit_tx (holds a reference)
 * @list: on a struct itrace_rlimit_tx, or on a list to free
 * @nr_pages: buffer size in pages, as charged to @user
 * @gen: the change of the limit that made it (itrace_rlimit_gen)
 */
struct itrace_dump {
	struct perf_event	*event;
	struct user_struct	*user;
	struct task_struct	*task;
	struct list_head	list;
	unsigned long		nr_pages;
	u64			gen;
};

static DEFINE_MUTEX(itrace_rlimit_mutex);
static DEFINE_STATIC_KEY_FALSE(itrace_rlimit_used);
static u64 itrace_rlimit_gen;

static unsigned long itrace_dump_pages(unsigned long bytes)
{
	return roundup_pow_of_two(DIV_ROUND_UP(bytes, PAGE_SIZE));
}

/*
 * Charge @nr_pages like an AUX mapping (perf_mmap_calc_limits()): within
 * the user's perf_event_mlock_kb allowance, or beyond it with CAP_IPC_LOCK
 * or when perf is not paranoid. There is no mm to charge the rest to.
 */
static bool itrace_dump_charge(struct user_struct *user,
			       unsigned long nr_pages)
{
	unsigned long limit = sysctl_perf_event_mlock >> (PAGE_SHIFT - 10);

	limit *= num_online_cpus();
	if (atomic_long_add_return(nr_pages, &user->perf_mlock) > limit &&
	    perf_is_paranoid() && !capable(CAP_IPC_LOCK)) {
		atomic_long_sub(nr_pages, &user->perf_mlock);
		return false;
	}

	return true;
}

static struct itrace_dump *itrace_dump_create(struct task_struct *tsk,
					      struct pmu *pmu, u64 config,
					      unsigned long nr_pages, u64 gen)
{
	struct itrace_dump *d;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);

	d->user = get_current_user();
	d->nr_pages = nr_pages;
	d->gen = gen;
	INIT_LIST_HEAD(&d->list);

	ret = -EPERM;
	if (!itrace_dump_charge(d->user, nr_pages))
		goto free;

	/* A user's own event of the PMU wins: see ITRACE_NOTE_PAUSED */
	d->event = itrace_kevent_create(pmu, config, -1, tsk, nr_pages);
	if (IS_ERR(d->event)) {
		ret = PTR_ERR(d->event);
		goto uncharge;
	}

	return d;

uncharge:
	atomic_long_sub(nr_pages, &d->user->perf_mlock);
free:
	free_uid(d->user);
	kfree(d);

	return ERR_PTR(ret);
}

static void itrace_dump_destroy(struct itrace_dump *d)
{
	itrace_kevent_release(d->event);
	atomic_long_sub(d->nr_pages, &d->user->perf_mlock);
	free_uid(d->user);
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

static bool itrace_task_dumpable(struct task_struct *tsk)
{
	bool ret;

	task_lock(tsk);
	ret = tsk->mm && get_dumpable(tsk->mm) == SUID_DUMP_USER;
	task_unlock(tsk);

	return ret;
}

/*
 * The checks perf_event_open() makes for a user-mode event on @tsk: the
 * paranoia level, the LSM, and ptrace access to another process.
 */
static int itrace_rlimit_allowed(struct task_struct *tsk)
{
	int ret;

	if (perf_paranoid_any() && !capable(CAP_SYS_ADMIN))
		return -EACCES;

	ret = security_perf_event_open(PERF_SECURITY_OPEN);
	if (ret)
		return ret;

	if (!same_thread_group(tsk, current) &&
	    !ptrace_may_access(tsk, PTRACE_MODE_READ_REALCREDS))
		return -EACCES;

	return 0;
}

/* A reference to each live user thread of @tsk's process, in @tx. */
static int itrace_rlimit_prepare(struct task_struct *tsk, struct pmu *pmu,
				 u64 config, unsigned long nr_pages,
				 struct itrace_rlimit_tx *tx)
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
		if (t->flags & (PF_EXITING | PF_KTHREAD | PF_IO_WORKER))
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

	for (i = 0; i < nr; i++) {
		d = ret ? NULL : itrace_dump_create(threads[i], pmu, config,
						    nr_pages, tx->gen);
		/* A thread that exits meanwhile needs no trace. */
		if (IS_ERR_OR_NULL(d)) {
			if (!IS_ERR(d) || PTR_ERR(d) != -ESRCH)
				ret = ret ?: PTR_ERR(d);
			put_task_struct(threads[i]);
			continue;
		}
		d->task = threads[i];
		list_add_tail(&d->list, &tx->dumps);
	}
	kvfree(threads);

	return ret;
}

/**
 * itrace_rlimit_begin() - prepare a change of RLIMIT_ITRACE
 * @tsk: a thread of the process whose limit changes
 * @new_rlim: the new limit; rlim_cur is in bytes of trace per thread, 0
 *	turns it off
 * @tx: the change, for itrace_rlimit_end()
 *
 * Makes, but does not install, one trace event per live thread of @tsk's
 * process, buffer @bytes rounded up to a power-of-two number of pages,
 * charged to the current user. A process that is not dumpable (see
 * PR_SET_DUMPABLE and set-user-ID execution) keeps the limit but gets no
 * trace. On success itrace_rlimit_mutex stays held until
 * itrace_rlimit_end(), which must follow; on error nothing is left.
 *
 * Context: process context, around do_prlimit() (kernel/sys.c), without
 * locks held.
 * Return: 0 on success (also when the soft limit keeps its value, which
 * then changes nothing), -EINVAL if it exceeds the hard limit or
 * ITRACE_DUMP_MAX_BYTES (1 GiB, so RLIM_INFINITY too), -ENODEV if no itrace PMU serves core
 * dumps, -EACCES if perf_event_paranoid or ptrace access to @tsk forbids
 * tracing it, the LSM's error, -EPERM if the buffers exceed the user's
 * perf_event_mlock_kb allowance without CAP_IPC_LOCK, -ENOMEM, or the
 * PMU's error for the event (-EBUSY, -EOPNOTSUPP ...).
 */
int itrace_rlimit_begin(struct task_struct *tsk,
			const struct rlimit *new_rlim,
			struct itrace_rlimit_tx *tx)
{
	unsigned long bytes = new_rlim->rlim_cur;
	struct pmu *pmu;
	u64 config;
	int ret;

	INIT_LIST_HEAD(&tx->dumps);
	tx->change = false;

	/* do_prlimit()'s first check, before any work */
	if (bytes > new_rlim->rlim_max || bytes > ITRACE_DUMP_MAX_BYTES)
		return -EINVAL;

	mutex_lock(&itrace_rlimit_mutex);
	tx->gen = ++itrace_rlimit_gen;

	if (READ_ONCE(tsk->signal->rlim[RLIMIT_ITRACE].rlim_cur) == bytes)
		return 0;
	tx->change = true;
	if (!bytes)
		return 0;

	ret = -ENODEV;
	pmu = itrace_coredump_pmu(&config);
	if (!pmu)
		goto unlock;

	ret = itrace_rlimit_allowed(tsk);
	if (ret)
		goto unlock;

	if (!itrace_task_dumpable(tsk))
		return 0;

	/* From here on fork, exec and exit look for traces. */
	static_branch_enable(&itrace_rlimit_used);

	ret = itrace_rlimit_prepare(tsk, pmu, config, itrace_dump_pages(bytes),
				    tx);
	if (!ret)
		return 0;

	itrace_dump_destroy_list(&tx->dumps);
unlock:
	mutex_unlock(&itrace_rlimit_mutex);

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
 * those they replace, and all of them when the limit went to 0.
 *
 * Context: process context; releases itrace_rlimit_mutex.
 */
void itrace_rlimit_end(struct task_struct *tsk, struct itrace_rlimit_tx *tx,
		       int err)
{
	struct itrace_dump *d, *tmp;
	struct task_struct *t;
	LIST_HEAD(old);

	if (err || !tx->change) {
		itrace_dump_destroy_list(&tx->dumps);
		goto unlock;
	}

	list_for_each_entry_safe(d, tmp, &tx->dumps, list) {
		list_del_init(&d->list);
		t = d->task;
		d->task = NULL;
		d = itrace_dump_install(t, d);
		put_task_struct(t);
		if (d)
			list_add(&d->list, &old);
	}

	rcu_read_lock();
	for_each_thread(tsk, t) {
		task_lock(t);
		d = t->itrace_dump;
		if (d && d->gen != tx->gen) {
			t->itrace_dump = NULL;
			list_add(&d->list, &old);
		}
		task_unlock(t);
	}
	rcu_read_unlock();

	itrace_dump_destroy_list(&old);
unlock:
	mutex_unlock(&itrace_rlimit_mutex);
}

/* Give @tsk a trace if its process has the limit and is dumpable. */
static void itrace_task_start(struct task_struct *tsk)
{
	unsigned long bytes = READ_ONCE(tsk->signal->rlim[RLIMIT_ITRACE].rlim_cur);
	struct itrace_dump *d;
	struct pmu *pmu;
	u64 config;

	lockdep_assert_held(&itrace_rlimit_mutex);

	if (!bytes || !itrace_task_dumpable(tsk))
		return;

	pmu = itrace_coredump_pmu(&config);
	if (!pmu)
		return;

	/* Failing (memory, accounting) leaves the thread without a trace. */
	d = itrace_dump_create(tsk, pmu, config, itrace_dump_pages(bytes),
			       itrace_rlimit_gen);
	if (IS_ERR(d))
		return;

	d = itrace_dump_install(tsk, d);
	if (d)
		itrace_dump_destroy(d);
}

/**
 * itrace_task_fork() - RLIMIT_ITRACE for a new thread or process
 * @p: the new task, not yet running
 *
 * A new thread or child of a process with RLIMIT_ITRACE set gets a trace of
 * its own (perf inheritance would send it into the parent's buffer). If it
 * cannot be made, @p runs without one: fork() does not fail for it.
 *
 * Context: process context, end of copy_process().
 */
void itrace_task_fork(struct task_struct *p)
{
	if (!static_branch_unlikely(&itrace_rlimit_used))
		return;

	if (p->flags & (PF_KTHREAD | PF_IO_WORKER))
		return;

	mutex_lock(&itrace_rlimit_mutex);
	/* Made already by a change of the limit that saw the new thread? */
	if (!p->itrace_dump)
		itrace_task_start(p);
	mutex_unlock(&itrace_rlimit_mutex);
}

static void itrace_task_stop(struct task_struct *tsk)
{
	struct itrace_dump *d;

	task_lock(tsk);
	d = tsk->itrace_dump;
	tsk->itrace_dump = NULL;
	task_unlock(tsk);

	if (d)
		itrace_dump_destroy(d);
}

/**
 * itrace_task_exec() - RLIMIT_ITRACE across execve()
 * @tsk: current, the only thread left, with its new mm and credentials
 *
 * The trace of the old program is dropped (it would not decode against the
 * new one); a dumpable program starts a fresh trace, one that is not
 * dumpable (set-user-ID, file capabilities) gets none.
 *
 * Context: process context, begin_new_exec() after the credentials are
 * committed.
 */
void itrace_task_exec(struct task_struct *tsk)
{
	if (!static_branch_unlikely(&itrace_rlimit_used))
		return;

	mutex_lock(&itrace_rlimit_mutex);
	itrace_task_stop(tsk);
	itrace_task_start(tsk);
	mutex_unlock(&itrace_rlimit_mutex);
}

/**
 * itrace_task_exit() - free the thread's trace
 * @tsk: current, exiting (PF_EXITING), its core dump written
 *
 * Context: process context, do_exit() after perf_event_exit_task().
 */
void itrace_task_exit(struct task_struct *tsk)
{
	if (static_branch_unlikely(&itrace_rlimit_used))
		itrace_task_stop(tsk);
}

#ifdef CONFIG_X86
/* What a decoder needs to know about the CPU (libipt's struct pt_config) */
static void itrace_note_cpu(struct itrace_note *n, struct pmu *pmu,
			    u64 config)
{
	struct cpuinfo_x86 *c = &boot_cpu_data;
	u32 eax, ebx, ecx, edx;
	u64 platform_info;

	if (c->x86_vendor == X86_VENDOR_INTEL)
		n->cpu_vendor = ITRACE_CPU_INTEL;
	n->cpu_family = c->x86;
	n->cpu_model = c->x86_model;
	n->cpu_stepping = c->x86_stepping;

	if (c->cpuid_level >= 0x15) {
		cpuid(0x15, &eax, &ebx, &ecx, &edx);
		n->tsc_ctc_den = eax;
		n->tsc_ctc_num = ebx;
	}

	if (!rdmsrl_safe(MSR_PLATFORM_INFO, &platform_info))
		n->nom_freq = (platform_info >> 8) & 0xff;

	/* perf's intel_pt config is IA32_RTIT_CTL: MTCFreq is bits 17:14 */
	if (!strcmp(pmu->name, "intel_pt"))
		n->mtc_freq = (config >> 14) & 0xf;
}
#else
static void itrace_note_cpu(struct itrace_note *n, struct pmu *pmu,
			    u64 config)
{
}
#endif

/**
 * itrace_core_note() - the NT_ITRACE note of a thread
 * @tsk: a thread of the dumping process: current, or one waiting for the
 *	dump to end
 * @size: set to the size of the note's descriptor, in bytes
 *
 * Stops the thread's trace and copies it after a struct itrace_note,
 * oldest byte first (see include/uapi/linux/itrace.h and
 * itrace_kevent_read()).
 *
 * Context: process context, the core dump's fill_note_info().
 * Return: the descriptor, kvmalloc()ed for the caller to kvfree(); NULL if
 * @tsk has no trace or memory ran out.
 */
void *itrace_core_note(struct task_struct *tsk, unsigned int *size)
{
	struct itrace_note *n = NULL;
	struct itrace_dump *d;
	bool wrapped;

	if (!static_branch_unlikely(&itrace_rlimit_used))
		return NULL;

	mutex_lock(&itrace_rlimit_mutex);
	d = tsk->itrace_dump;
	if (!d)
		goto unlock;

	n = kvzalloc(sizeof(*n) + itrace_kevent_size(d->event), GFP_KERNEL);
	if (!n)
		goto unlock;

	n->hdr_size = sizeof(*n);
	n->version = ITRACE_NOTE_VERSION;
	strscpy(n->pmu_name, d->event->pmu->name, sizeof(n->pmu_name));
	n->config = d->event->attr.config;
	n->buf_size = itrace_kevent_size(d->event);
	n->trace_size = itrace_kevent_read(d->event, n + 1, &wrapped);
	n->flags = wrapped ? ITRACE_NOTE_WRAPPED : 0;
	n->pauses = itrace_kevent_pauses(d->event);
	if (n->pauses)
		n->flags |= ITRACE_NOTE_PAUSED;
	n->tid = task_pid_vnr(tsk);
	itrace_note_cpu(n, d->event->pmu, n->config);
	*size = sizeof(*n) + n->trace_size;
unlock:
	mutex_unlock(&itrace_rlimit_mutex);

	return n;
}
