/*
 * Intel Branch Trace Store emulation for TCG
 *
 * With CPUID.1 EDX.DS (and ECX.DTES64, ECX.DS-CPL; opt-in: "+ds"), the
 * guest gets IA32_DEBUGCTL and IA32_DS_AREA, and while DEBUGCTL.TR and
 * DEBUGCTL.BTS are both set, a 24-byte record {from, to, flags} for every
 * taken branch, interrupt and exception in the BTS buffer of the 64-bit DS
 * save area (SDM Vol. 3B, "Branch Trace Store", "Debug Store").
 *
 * Translation blocks are keyed on HF_BTS_MASK (TR and BTS set), so only
 * code translated while BTS is on records its taken near branches
 * (translate.c, gen_bts_*()); far transfers, interrupts and exceptions
 * come from seg_helper.c.  A guest that never enables BTS runs unchanged.
 *
 * Records and the index go straight to guest memory, through linear
 * addresses with supervisor rights; an address that does not translate
 * (or is not RAM) loses the record, and never raises #PF.  Each record
 * the helper writes also sets up a "fast run" (TCGBTSState): host
 * addresses of the next records, over as many pages as are one piece of
 * host memory (and of guest RAM), up to the absolute maximum or the
 * threshold, and of bts_index, where the TBs store near branches'
 * records themselves, index included.  The run
 * ends at every IA32_DEBUGCTL, IA32_DS_AREA or CR3 write and at every
 * record the helper writes (far transfers, interrupts, exceptions), which
 * read the DS area again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "cpu.h"
#include "exec/helper-proto.h"
#include "exec/exec-all.h"
#include "exec/cpu_ldst.h"
#include "exec/ram_addr.h"
#include "sysemu/runstate.h"
#include "tcg/helper-tcg.h"
#include "tcg/bts.h"
#include "tcg/pmu.h"

bool tcg_bts_supported(CPUX86State *env)
{
    return env->features[FEAT_1_EDX] & CPUID_DTS;
}

/*
 * Write bts_index back to the DS area if the fast run moved it: before
 * the helper reads the DS area, before a PMI or any interrupt or
 * exception is delivered, at far transfers, before IA32_DEBUGCTL,
 * IA32_DS_AREA or CR3 change, before the VM state is saved.
 */
static void bts_dirty(void *host, uint64_t len)
{
    ram_addr_t ra = qemu_ram_addr_from_host(host);

    if (ra != RAM_ADDR_INVALID) {
        cpu_physical_memory_set_dirty_range(ra, len, DIRTY_CLIENTS_ALL);
    }
}

static void bts_flush(CPUX86State *env)
{
    TCGBTSState *bts = &env->bts;
    uint64_t len;

    if (bts->fast_ptr != UINTPTR_MAX && bts->fast_ptr != bts->run_host) {
        len = bts->fast_ptr - bts->run_host;
        /* What the TBs stored bypassed dirty tracking (migration). */
        bts_dirty((void *)bts->run_host, len);
        bts->run_index += len;
        bts->run_host = bts->fast_ptr;
        stq_le_p(bts->index_host, bts->run_index);
        bts_dirty(bts->index_host, 8);
    }
}

/*
 * The VM stops (before a migration's last RAM pass, among others), its
 * vCPUs paused: the records and the index in guest memory, marked dirty.
 */
static void bts_vm_state_change(void *opaque, bool running, RunState state)
{
    X86CPU *cpu = opaque;

    if (!running) {
        bts_flush(&cpu->env);
    }
}

void tcg_bts_init(X86CPU *cpu)
{
    qemu_add_vm_change_state_handler(bts_vm_state_change, cpu);
}

/* No fast run: the next near branch goes through the helper. */
static void bts_end_run(CPUX86State *env)
{
    TCGBTSState *bts = &env->bts;

    bts_flush(env);
    bts->fast_ptr = UINTPTR_MAX;
    bts->fast_end[0] = !(env->msr_debugctl & DEBUGCTL_BTS_OFF_OS);
    bts->fast_end[1] = !(env->msr_debugctl & DEBUGCTL_BTS_OFF_USR);
}

static void bts_update_hflags(CPUX86State *env)
{
    uint64_t on = DEBUGCTL_TR | DEBUGCTL_BTS;
    uint64_t off = DEBUGCTL_BTS_OFF_OS | DEBUGCTL_BTS_OFF_USR;

    env->bts.fast_ptr = UINTPTR_MAX;
    bts_end_run(env);
    env->hflags &= ~HF_BTS_MASK;
    if (tcg_bts_supported(env) && (env->msr_debugctl & on) == on &&
        (env->msr_debugctl & off) != off) {
        env->hflags |= HF_BTS_MASK;
    }
}

static bool bts_canonical(CPUX86State *env, uint64_t addr)
{
    int bits = (env->cr[4] & CR4_LA57_MASK) ? 57 : 48;

    return ((int64_t)addr << (64 - bits)) >> (64 - bits) == (int64_t)addr;
}

bool tcg_bts_wrmsr(CPUX86State *env, uint32_t msr, uint64_t val)
{
    switch (msr) {
    case MSR_IA32_DEBUGCTL:
        if (val & ~DEBUGCTL_VALID) {
            return false;
        }
        bts_flush(env);
        env->msr_debugctl = val;
        /* BTINT's threshold PMI is armed again by any write. */
        env->bts.pmi_sent = false;
        bts_update_hflags(env);
        return true;
    case MSR_IA32_DS_AREA:
        if (!bts_canonical(env, val)) {
            return false;
        }
        env->msr_ds_area = val;
        bts_end_run(env);
        return true;
    }
    return false;
}

uint64_t tcg_bts_rdmsr(CPUX86State *env, uint32_t msr)
{
    switch (msr) {
    case MSR_IA32_DEBUGCTL:
        return env->msr_debugctl;
    case MSR_IA32_DS_AREA:
        return env->msr_ds_area;
    }
    return 0;
}

/*
 * IA32_MISC_ENABLE bits 11 (BTS unavailable) and 12 (PEBS unavailable)
 * are read-only: with DS, BTS is available and PEBS is not.
 */
uint64_t tcg_bts_misc_enable(CPUX86State *env, uint64_t val)
{
    val &= ~MISC_ENABLE_DS_RO;
    if (tcg_bts_supported(env)) {
        val |= MISC_ENABLE_PEBS_UNAVAIL;
    }
    return val;
}

void tcg_bts_post_load(CPUX86State *env)
{
    bts_update_hflags(env);
}

void tcg_bts_pre_save(CPUX86State *env)
{
    bts_flush(env);
}

/* MOV to CR3: the buffer's mapping may have changed. */
void tcg_bts_mov_cr3(CPUX86State *env)
{
    if (env->hflags & HF_BTS_MASK) {
        bts_end_run(env);
    }
}

/*
 * Copy @len bytes between @buf and guest linear address @addr, page by
 * page, with supervisor rights and without SMAP (the DS area and the BTS
 * buffer are kernel memory, written whatever the CPL).  False if a page
 * does not translate or is not RAM: nothing faults.
 */
static bool bts_access(CPUX86State *env, uint64_t addr, void *buf,
                       uint32_t len, bool write, uintptr_t ra)
{
    int mmu_idx = MMU_KNOSMAP64_IDX + !(env->hflags & HF_LMA_MASK);
    uint8_t *p = buf;

    while (len) {
        uint32_t n = MIN(len, TARGET_PAGE_SIZE - (addr & ~TARGET_PAGE_MASK));
        void *host;
        int flags;

        flags = probe_access_flags(env, addr,
                                   write ? MMU_DATA_STORE : MMU_DATA_LOAD,
                                   mmu_idx, true, &host, ra);
        if ((flags & TLB_INVALID_MASK) || !host) {
            return false;
        }
        if (write) {
            memcpy(host, p, n);
        } else {
            memcpy(p, host, n);
        }
        addr += n;
        p += n;
        len -= n;
    }
    return true;
}

/*
 * The host address of guest linear address @addr, to write to, if it is
 * RAM and translates; else NULL.  Marks its page dirty.
 */
static void *bts_host(CPUX86State *env, uint64_t addr, uintptr_t ra)
{
    int mmu_idx = MMU_KNOSMAP64_IDX + !(env->hflags & HF_LMA_MASK);
    void *host;
    int flags;

    flags = probe_access_flags(env, addr, MMU_DATA_STORE, mmu_idx, true,
                               &host, ra);
    return (flags & TLB_INVALID_MASK) ? NULL : host;
}

/*
 * After a record, with the index at @next: let TBs store the next records
 * themselves (gen_bts_record()) below @limit, where the helper must take
 * over (the wrap, the absolute maximum, the threshold), while they stay
 * in the pages from @next's on that are one piece of host memory and of
 * guest RAM (Linux's BTS buffer is one physically contiguous allocation,
 * in the kernel's direct map: all of it, as a rule).
 */
static void bts_start_run(CPUX86State *env, uint64_t next, uint64_t limit,
                          uintptr_t ra)
{
    TCGBTSState *bts = &env->bts;
    uint64_t room, len;
    ram_addr_t ram;
    uint8_t *rec;
    void *ix;
    int i;

    bts_end_run(env);
    if (HOST_BIG_ENDIAN) {
        return;         /* TBs store host-endian words */
    }
    if (limit <= next || limit - next < BTS_RECORD_SIZE) {
        return;
    }
    room = limit - next;
    rec = bts_host(env, next, ra);
    ix = bts_host(env, env->msr_ds_area + DS_BTS_INDEX, ra);
    if (!rec || !ix) {
        return;
    }
    ram = qemu_ram_addr_from_host(rec);
    len = TARGET_PAGE_SIZE - (next & ~TARGET_PAGE_MASK);
    while (len < room && ram != RAM_ADDR_INVALID) {
        uint8_t *h = bts_host(env, next + len, ra);

        /* bts_flush() marks the run dirty as one ram_addr range */
        if (h != rec + len || qemu_ram_addr_from_host(h) != ram + len) {
            break;
        }
        len += TARGET_PAGE_SIZE;
    }
    limit = next + MIN(room, len);
    if (limit - next < BTS_RECORD_SIZE) {
        return;
    }
    bts->fast_ptr = bts->run_host = (uintptr_t)rec;
    bts->index_host = ix;
    bts->run_index = next;
    for (i = 0; i < 2; i++) {
        if (bts->fast_end[i]) {
            /* the last record starts at limit - 24 */
            bts->fast_end[i] = (uintptr_t)rec + (limit - next) -
                               BTS_RECORD_SIZE + 1;
        }
    }
}

/*
 * Store one BTS record.  The index is read from the DS area every time
 * (software may move it while BTS is on, as Linux does in its PMI) and
 * written back with the record, before any PMI.  BTINT clear: the buffer
 * is circular, the index goes back to the base as soon as the next record
 * would not fit below the absolute maximum.  BTINT set: records that would
 * not fit are dropped (the index stays at the absolute maximum), and the
 * write that brings the index from below the interrupt threshold to it or
 * above raises one PMI through the LVT performance-counter entry, with no
 * IA32_PERF_GLOBAL_STATUS bit (which would be PEBS's).
 */
static void bts_record(CPUX86State *env, uint64_t from, uint64_t to,
                       int cpl, uintptr_t ra)
{
    uint64_t ctl = env->msr_debugctl;
    uint8_t ds[32], rec[BTS_RECORD_SIZE];
    uint64_t base, index, max, thresh, next;

    bts_flush(env);
    if (ctl & (cpl == 0 ? DEBUGCTL_BTS_OFF_OS : DEBUGCTL_BTS_OFF_USR)) {
        return;
    }
    bts_end_run(env);
    if (!bts_access(env, env->msr_ds_area, ds, sizeof(ds), false, ra)) {
        return;
    }
    base = ldq_le_p(ds + DS_BTS_BASE);
    index = ldq_le_p(ds + DS_BTS_INDEX);
    max = ldq_le_p(ds + DS_BTS_ABS_MAX);
    thresh = ldq_le_p(ds + DS_BTS_THRESHOLD);

    if (index < base || index + BTS_RECORD_SIZE > max) {
        if (ctl & DEBUGCTL_BTINT) {
            return;
        }
        index = base;
        if (index + BTS_RECORD_SIZE > max) {
            return;
        }
    }
    stq_le_p(rec, from);
    stq_le_p(rec + 8, to);
    stq_le_p(rec + 16, 0);      /* no branch prediction information */
    if (!bts_access(env, index, rec, sizeof(rec), true, ra)) {
        return;
    }
    next = index + BTS_RECORD_SIZE;
    if (!(ctl & DEBUGCTL_BTINT) && next + BTS_RECORD_SIZE > max) {
        next = base;
    }
    stq_le_p(ds, next);
    if (!bts_access(env, env->msr_ds_area + DS_BTS_INDEX, ds, 8, true, ra)) {
        return;
    }
    if ((ctl & DEBUGCTL_BTINT) && index < thresh && next >= thresh &&
        !env->bts.pmi_sent) {
        env->bts.pmi_sent = true;
        tcg_pmu_pmi(env);
    }
    /*
     * A fast record at P needs P + 24 <= limit: BTINT clear, P + 48 <= max
     * (the record after which the index wraps is the helper's); BTINT
     * set, P + 24 <= max, and P + 24 < thresh while below it (the record
     * that reaches it is the helper's).
     */
    if (!(ctl & DEBUGCTL_BTINT)) {
        bts_start_run(env, next, max - BTS_RECORD_SIZE, ra);
    } else if (next < thresh) {
        bts_start_run(env, next, MIN(max, thresh - 1), ra);
    } else {
        bts_start_run(env, next, max, ra);
    }
}

/*
 * A taken near branch of a TB translated with HF_BTS_MASK, when the fast
 * run does not take its record: @from is the linear address of the
 * branch instruction, @to that of its target.
 */
void helper_bts_branch(CPUX86State *env, target_ulong from, target_ulong to)
{
    bts_record(env, from, to, env->hflags & HF_CPL_MASK, GETPC());
}

/*
 * End of a far transfer (far JMP, CALL and RET, IRET, SYSCALL, SYSRET,
 * SYSENTER, SYSEXIT) whose instruction, translated with HF_BTS_MASK,
 * stored its linear address and CPL in env->bts first (gen_bts_far()).
 */
void tcg_bts_far_transfer(CPUX86State *env)
{
    int pending = env->bts.far_cpl;

    bts_flush(env);
    if (!pending) {
        return;
    }
    env->bts.far_cpl = 0;
    if (env->hflags & HF_BTS_MASK) {
        bts_record(env, env->bts.far_from, env->segs[R_CS].base + env->eip,
                   pending - 1, 0);
    }
}

/*
 * An interrupt or exception was delivered: @from is the linear address of
 * the INT n, INT3 or INTO instruction, of the instruction that faulted,
 * or, for an interrupt or a trap, of the next instruction; @cpl the CPL
 * there.  The target is the first instruction of the handler.
 */
void tcg_bts_interrupt(CPUX86State *env, target_ulong from, int cpl)
{
    bts_flush(env);
    env->bts.far_cpl = 0;
    if (env->hflags & HF_BTS_MASK) {
        bts_record(env, from, env->segs[R_CS].base + env->eip, cpl, 0);
    }
}
