// SPDX-License-Identifier: GPL-2.0
/*
 * itrace: which itrace PMU writes the trace of core dumps
 *
 * /sys/bus/event_source/devices/<pmu>/itrace/ holds, for each itrace PMU:
 *
 *	coredump		1 on the PMU that serves RLIMIT_ITRACE core
 *				dumps, else 0; writing 1 selects this PMU
 *				(config 0)
 *	coredump_config		that PMU's perf_event_attr::config, in hex
 *
 * Only root writes them; a config must make a valid event of the PMU. The
 * selection is read on every fork and exec of a process that has the
 * limit set, so it is published through RCU and read without a lock.
 */

#include <linux/capability.h>
#include <linux/device.h>
#include <linux/itrace.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "internal.h"
#include "itrace_internal.h"

/**
 * struct itrace_dump_sel - the PMU and config of core-dump trace events
 * @rcu: frees it after the readers of the one that replaced it
 * @pmu: an itrace PMU; it stays registered while it is selected
 * @config: perf_event_attr::config of the events
 * @by_default: selected by registration, not by sysfs
 */
struct itrace_dump_sel {
	struct rcu_head		rcu;
	struct pmu		*pmu;
	u64			config;
	bool			by_default;
};

/* Written under itrace_pmus_lock */
static struct itrace_dump_sel __rcu *itrace_dump_sel;

/* Under itrace_pmus_lock: select @pmu (NULL: none) with @config. */
static int itrace_dump_select(struct pmu *pmu, u64 config, bool by_default)
{
	struct itrace_dump_sel *sel = NULL, *old;

	lockdep_assert_held(&itrace_pmus_lock);

	if (pmu) {
		sel = kzalloc(sizeof(*sel), GFP_KERNEL);
		if (!sel)
			return -ENOMEM;
		sel->pmu = pmu;
		sel->config = config;
		sel->by_default = by_default;
	}

	old = rcu_replace_pointer(itrace_dump_sel, sel,
				  lockdep_is_held(&itrace_pmus_lock));
	if (old)
		kfree_rcu(old, rcu);

	return 0;
}

/* Under itrace_pmus_lock: is @pmu selected; its config in @config. */
static bool itrace_dump_selected(struct pmu *pmu, u64 *config)
{
	struct itrace_dump_sel *sel;

	sel = rcu_dereference_protected(itrace_dump_sel,
					lockdep_is_held(&itrace_pmus_lock));
	if (!sel || sel->pmu != pmu)
		return false;
	if (config)
		*config = sel->config;

	return true;
}

/**
 * itrace_coredump_pmu() - the itrace PMU that serves RLIMIT_ITRACE
 * @type: set to its perf_event_attr::type
 * @config: set to the perf_event_attr::config of core-dump trace events
 *
 * Context: any; lockless.
 * Return: 0, or -ENODEV if no itrace PMU is registered.
 */
int itrace_coredump_pmu(u32 *type, u64 *config)
{
	struct itrace_dump_sel *sel;
	int ret = -ENODEV;

	rcu_read_lock();
	sel = rcu_dereference(itrace_dump_sel);
	if (sel) {
		*type = sel->pmu->type;
		*config = sel->config;
		ret = 0;
	}
	rcu_read_unlock();

	return ret;
}

/**
 * itrace_coredump_pmu_default() - a new itrace PMU serves core dumps if
 *	none does yet, or in place of a secondary one selected by default
 * @pmu: the PMU being registered
 * @secondary: it has ITRACE_PMU_SECONDARY
 *
 * Context: itrace_pmus_lock held.
 */
void itrace_coredump_pmu_default(struct pmu *pmu, bool secondary)
{
	struct itrace_dump_sel *sel;

	sel = rcu_dereference_protected(itrace_dump_sel,
					lockdep_is_held(&itrace_pmus_lock));
	if (sel && (secondary || !sel->by_default ||
		    !itrace_pmu_has(sel->pmu, ITRACE_PMU_SECONDARY)))
		return;

	/* Without memory for it, the selection stays as it is */
	if (itrace_dump_select(pmu, 0, true))
		pr_warn("itrace: %s does not serve core dumps: out of memory\n",
			pmu->name);
}

/**
 * itrace_coredump_pmu_gone() - a PMU leaves: @next serves core dumps
 *	in its place
 * @pmu: the PMU being unregistered
 * @next: the first itrace PMU left, or NULL
 *
 * Context: itrace_pmus_lock held.
 */
void itrace_coredump_pmu_gone(struct pmu *pmu, struct pmu *next)
{
	if (!itrace_dump_selected(pmu, NULL))
		return;

	/* Dropping the selection never fails: fall back to none */
	if (!next || itrace_dump_select(next, 0, true))
		itrace_dump_select(NULL, 0, false);
}

static ssize_t coredump_show(struct device *dev,
			     struct device_attribute *attr, char *page)
{
	struct pmu *pmu = dev_get_drvdata(dev);
	bool selected;

	mutex_lock(&itrace_pmus_lock);
	selected = itrace_dump_selected(pmu, NULL);
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

	/* Some PMU always serves core dumps: select another to move it. */
	if (kstrtouint(buf, 0, &val) || val != 1)
		return -EINVAL;

	mutex_lock(&itrace_pmus_lock);
	ret = -ENODEV;
	/* The PMU left itrace (itrace_pmu_unregister()) but not sysfs yet */
	if (!(pmu->capabilities & PERF_PMU_CAP_ITRACE_FD))
		goto unlock;
	ret = -EOPNOTSUPP;
	if (!itrace_pmu_has(pmu, ITRACE_PMU_KEVENTS))
		goto unlock;
	ret = 0;
	if (!itrace_dump_selected(pmu, NULL))
		ret = itrace_dump_select(pmu, 0, false);
unlock:
	mutex_unlock(&itrace_pmus_lock);

	return ret ?: count;
}
static DEVICE_ATTR_RW(coredump);

static ssize_t coredump_config_show(struct device *dev,
				    struct device_attribute *attr, char *page)
{
	struct pmu *pmu = dev_get_drvdata(dev);
	ssize_t ret = -ENODATA;
	u64 config;

	mutex_lock(&itrace_pmus_lock);
	if (itrace_dump_selected(pmu, &config))
		ret = sysfs_emit(page, "%#llx\n", config);
	mutex_unlock(&itrace_pmus_lock);

	return ret;
}

/*
 * Can @config make an event of @pmu? Ask the PMU: create a disabled
 * user-mode event of the writer's task, as a core dump would for a task,
 * and free it. Like the events of core dumps, it yields its PMU: it takes
 * no part in the exclusive PMU accounting, so the writer's own events or a
 * CPU-wide one of the PMU do not make it fail with EBUSY.
 */
static int itrace_check_config(struct pmu *pmu, u64 config)
{
	struct perf_event_attr attr;
	struct perf_event *event;

	itrace_kevent_attr(&attr, pmu->type, config);
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

	if (kstrtou64(buf, 16, &config))
		return -EINVAL;

	if (!itrace_pmu_has(pmu, ITRACE_PMU_KEVENTS))
		return -EOPNOTSUPP;

	ret = itrace_check_config(pmu, config);
	if (ret)
		return ret;

	/* The config is that of the selected PMU: select it first. */
	mutex_lock(&itrace_pmus_lock);
	ret = -EINVAL;
	if (itrace_dump_selected(pmu, NULL))
		ret = itrace_dump_select(pmu, config, false);
	mutex_unlock(&itrace_pmus_lock);

	return ret ?: count;
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

/**
 * itrace_sysfs_add() - give a new itrace PMU its itrace directory
 * @pmu: the PMU, registered with perf
 * @saved: set to the PMU's pmu::attr_update if it had to be replaced
 *
 * If the PMU's device exists, the group is added to it. Before the
 * event_source bus comes up (perf_event_sysfs_init(), a device initcall:
 * PMUs registered by earlier initcalls have no device yet), it goes to the
 * end of a copy of pmu::attr_update, which the bus adds when it makes the
 * device; the initcalls run one after another, so nothing reads
 * attr_update meanwhile.
 *
 * Context: itrace_pmus_lock held.
 * Return: 0, -ENOMEM, or the error of sysfs_create_group().
 */
int itrace_sysfs_add(struct pmu *pmu, const struct attribute_group ***saved)
{
	const struct attribute_group **groups;
	int n = 0;

	*saved = NULL;
	if (pmu->dev)
		return sysfs_create_group(&pmu->dev->kobj, &itrace_pmu_group);

	while (pmu->attr_update && pmu->attr_update[n])
		n++;

	groups = kcalloc(n + 2, sizeof(*groups), GFP_KERNEL);
	if (!groups)
		return -ENOMEM;

	if (n)
		memcpy(groups, pmu->attr_update, n * sizeof(*groups));
	groups[n] = &itrace_pmu_group;
	*saved = pmu->attr_update ?: groups;
	pmu->attr_update = groups;

	return 0;
}

/**
 * itrace_sysfs_remove() - undo itrace_sysfs_add()
 * @pmu: the PMU
 * @saved: what itrace_sysfs_add() stored in @saved
 *
 * Context: itrace_pmus_lock held.
 */
void itrace_sysfs_remove(struct pmu *pmu,
			 const struct attribute_group **saved)
{
	const struct attribute_group **groups = pmu->attr_update;

	if (pmu->dev)
		sysfs_remove_group(&pmu->dev->kobj, &itrace_pmu_group);

	if (!saved)
		return;

	/* The bus read attr_update when it made the device, if it did */
	pmu->attr_update = saved == groups ? NULL : saved;
	kfree(groups);
}
