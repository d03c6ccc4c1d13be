//! A minimal io_uring over raw syscalls: setup + the three mmaps, pushing SQEs, submitting, and
//! waiting for / reaping CQEs. No SQPOLL, so the kernel consumes SQEs inside io_uring_enter and
//! the SQ is empty again whenever no one is between push() and submit().
//! Threading: one thread (the engine's JS thread) pushes, submits, waits and reaps, so the SQ has
//! one producer and the CQ one consumer. A registered eventfd tells that thread's event loop when
//! completions arrive.

use crate::sys;
use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};

const OFF_SQ_RING: i64 = 0;
const OFF_CQ_RING: i64 = 0x800_0000;
const OFF_SQES: i64 = 0x1000_0000;
const FEAT_SINGLE_MMAP: u32 = 1;
const SETUP_CQSIZE: u32 = 1 << 3;
const ENTER_GETEVENTS: u32 = 1;
const REGISTER_EVENTFD: u32 = 4;

pub const OP_WRITEV: u8 = 2;
pub const OP_FSYNC: u8 = 3;
pub const OP_SYNC_FILE_RANGE: u8 = 8;
pub const SQE_IO_LINK: u8 = 1 << 2;
pub const FSYNC_DATASYNC: u32 = 1;
/// sync_file_range(2)'s SYNC_FILE_RANGE_WRITE: start writeback of the range's dirty pages, wait for nothing.
pub const SYNC_FILE_RANGE_WRITE: u32 = 2;

#[repr(C)]
#[derive(Default)]
struct SqOffsets { head: u32, tail: u32, ring_mask: u32, ring_entries: u32, flags: u32, dropped: u32, array: u32, resv1: u32, user_addr: u64 }

#[repr(C)]
#[derive(Default)]
struct CqOffsets { head: u32, tail: u32, ring_mask: u32, ring_entries: u32, overflow: u32, cqes: u32, flags: u32, resv1: u32, user_addr: u64 }

#[repr(C)]
#[derive(Default)]
struct Params { sq_entries: u32, cq_entries: u32, flags: u32, sq_thread_cpu: u32, sq_thread_idle: u32, features: u32, wq_fd: u32, resv: [u32; 3], sq_off: SqOffsets, cq_off: CqOffsets }

/// One submission queue entry (64 bytes, the kernel's struct io_uring_sqe for the fields used).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Sqe { pub opcode: u8, pub flags: u8, pub ioprio: u16, pub fd: i32, pub off: u64, pub addr: u64, pub len: u32, pub op_flags: u32, pub user_data: u64, pub buf_index: u16, pub personality: u16, pub splice_fd_in: i32, pub addr3: u64, pub pad: u64 }

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Cqe { pub user_data: u64, pub res: i32, pub flags: u32 }

struct Map { ptr: *mut u8, len: usize }

pub struct Uring {
    fd: i32,
    sq_map: Map,
    cq_map: Option<Map>,
    sqes_map: Map,
    sq_head: *const AtomicU32,
    sq_tail: *const AtomicU32,
    sq_mask: u32,
    sq_array: *mut u32,
    sqes: *mut Sqe,
    cq_head: *const AtomicU32,
    cq_tail: *const AtomicU32,
    cq_mask: u32,
    cqes: *const Cqe,
    pub sq_entries: u32,
    /// SQEs pushed but not yet handed to the kernel.
    unsubmitted: u32,
}

fn map(fd: i32, len: usize, off: i64) -> Result<Map, i32> {
    // SAFETY: a fresh shared mapping of the ring fd; no existing memory is affected.
    let p = unsafe { sys::mmap(ptr::null_mut(), len, sys::PROT_READ | sys::PROT_WRITE, sys::MAP_SHARED | sys::MAP_POPULATE, fd, off) };
    if p == sys::MAP_FAILED { Err(sys::errno()) } else { Ok(Map { ptr: p as *mut u8, len }) }
}

fn enter(fd: i32, to_submit: u32, min_complete: u32, flags: u32) -> Result<u32, i32> {
    loop {
        // SAFETY: io_uring_enter with a null sigset only reads the ring this struct owns.
        let r = unsafe { sys::syscall(sys::SYS_IO_URING_ENTER, fd, to_submit, min_complete, flags, ptr::null::<c_void>(), 0usize) };
        if r >= 0 { return Ok(r as u32); }
        let e = sys::errno();
        if e != sys::EINTR { return Err(e); }
    }
}

impl Uring {
    /// Sets up a ring of `entries` SQEs (rounded up to a power of two by the kernel) and a CQ
    /// twice that size. Returns the errno on failure (ENOSYS, EPERM when io_uring is disabled).
    pub fn new(entries: u32) -> Result<Uring, i32> {
        let mut p = Params { flags: SETUP_CQSIZE, cq_entries: entries.saturating_mul(2), ..Default::default() };
        // SAFETY: p is a properly sized io_uring_params the kernel fills in.
        let fd = unsafe { sys::syscall(sys::SYS_IO_URING_SETUP, entries, &mut p as *mut Params) };
        if fd < 0 { return Err(sys::errno()); }
        let fd = fd as i32;
        match Self::map_rings(fd, &p) {
            Ok(u) => Ok(u),
            Err(e) => {
                // SAFETY: fd was returned by io_uring_setup above and is not used afterwards.
                unsafe { sys::close(fd) };
                Err(e)
            }
        }
    }

    fn map_rings(fd: i32, p: &Params) -> Result<Uring, i32> {
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * core::mem::size_of::<Cqe>();
        let single = p.features & FEAT_SINGLE_MMAP != 0;
        let sq_map = map(fd, if single { sq_len.max(cq_len) } else { sq_len }, OFF_SQ_RING)?;
        let cq_map = if single { None } else { Some(map(fd, cq_len, OFF_CQ_RING)?) };
        let sqes_map = map(fd, p.sq_entries as usize * core::mem::size_of::<Sqe>(), OFF_SQES)?;
        let sq = sq_map.ptr;
        let cq = cq_map.as_ref().map_or(sq, |m| m.ptr);
        // SAFETY: the offsets come from the kernel and lie inside the mappings just made.
        unsafe {
            Ok(Uring {
                fd,
                sq_head: sq.add(p.sq_off.head as usize) as *const AtomicU32,
                sq_tail: sq.add(p.sq_off.tail as usize) as *const AtomicU32,
                sq_mask: *(sq.add(p.sq_off.ring_mask as usize) as *const u32),
                sq_array: sq.add(p.sq_off.array as usize) as *mut u32,
                sqes: sqes_map.ptr as *mut Sqe,
                cq_head: cq.add(p.cq_off.head as usize) as *const AtomicU32,
                cq_tail: cq.add(p.cq_off.tail as usize) as *const AtomicU32,
                cq_mask: *(cq.add(p.cq_off.ring_mask as usize) as *const u32),
                cqes: cq.add(p.cq_off.cqes as usize) as *const Cqe,
                sq_entries: p.sq_entries,
                sq_map,
                cq_map,
                sqes_map,
                unsubmitted: 0,
            })
        }
    }

    /// Queues one SQE; false when the SQ is full (callers bound in-flight ops so it never is).
    pub fn push(&mut self, sqe: Sqe) -> bool {
        // SAFETY: head/tail are the kernel-shared ring indices; we are the only producer.
        unsafe {
            let head = (*self.sq_head).load(Ordering::Acquire);
            let tail = (*self.sq_tail).load(Ordering::Relaxed);
            if tail.wrapping_sub(head) >= self.sq_entries { return false; }
            let slot = tail & self.sq_mask;
            *self.sqes.add(slot as usize) = sqe;
            *self.sq_array.add(slot as usize) = slot;
            // Release publishes the SQE contents before the kernel can see the new tail.
            (*self.sq_tail).store(tail.wrapping_add(1), Ordering::Release);
        }
        self.unsubmitted += 1;
        true
    }

    /// Hands every pushed SQE to the kernel. A request that fails at submission (bad fd, ...)
    /// still consumes its SQE and posts a CQE with the error, so the loop only repeats for
    /// transient refusals, which are bounded in count.
    pub fn submit(&mut self) -> Result<(), i32> {
        let mut transient = 0;
        while self.unsubmitted > 0 {
            match enter(self.fd, self.unsubmitted, 0, 0) {
                Ok(n) => self.unsubmitted -= n.min(self.unsubmitted),
                Err(e) if (e == sys::EAGAIN || e == sys::EBUSY) && transient < 1000 => {
                    transient += 1;
                    std::thread::yield_now();
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// SQEs pushed but not yet accepted by the kernel.
    pub fn pending(&self) -> u32 {
        self.unsubmitted
    }

    /// Takes back the last `n` pushed SQEs if the kernel has not consumed any of them (true),
    /// so a refused commit leaves nothing behind in the SQ.
    pub fn rewind(&mut self, n: u32) -> bool {
        if n == 0 || self.unsubmitted != n { return n == 0; }
        // SAFETY: without SQPOLL the kernel consumes SQEs only in an io_uring_enter with
        // to_submit > 0, which only this ring's one thread makes, and unsubmitted == n says none
        // of these n entries was consumed.
        unsafe {
            let tail = (*self.sq_tail).load(Ordering::Relaxed);
            (*self.sq_tail).store(tail.wrapping_sub(n), Ordering::Release);
        }
        self.unsubmitted = 0;
        true
    }

    /// Blocks until at least one CQE is available.
    pub fn wait(&self) -> Result<(), i32> {
        enter(self.fd, 0, 1, ENTER_GETEVENTS).map(|_| ())
    }

    /// Has the kernel signal `event_fd` for every completion it posts (IORING_REGISTER_EVENTFD).
    pub fn register_eventfd(&self, event_fd: i32) -> Result<(), i32> {
        // SAFETY: io_uring_register reads one i32 (the eventfd) from the pointer.
        let r = unsafe { sys::syscall(sys::SYS_IO_URING_REGISTER, self.fd, REGISTER_EVENTFD, &event_fd as *const i32, 1u32) };
        if r < 0 { Err(sys::errno()) } else { Ok(()) }
    }

    /// Moves every available CQE into `out`.
    pub fn reap(&self, out: &mut Vec<Cqe>) {
        // SAFETY: CQ indices are kernel-shared atomics; this thread is the only consumer, and the
        // Acquire load of the tail makes the kernel's CQE writes visible before they are read.
        unsafe {
            let mut head = (*self.cq_head).load(Ordering::Relaxed);
            let tail = (*self.cq_tail).load(Ordering::Acquire);
            while head != tail {
                out.push(*self.cqes.add((head & self.cq_mask) as usize));
                head = head.wrapping_add(1);
            }
            (*self.cq_head).store(head, Ordering::Release);
        }
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // SAFETY: the engine drops the ring only after every request completed (shutdown), so
        // neither we nor the kernel touch these mappings afterwards.
        unsafe {
            for m in [Some(&self.sq_map), self.cq_map.as_ref(), Some(&self.sqes_map)].into_iter().flatten() {
                sys::munmap(m.ptr as *mut c_void, m.len);
            }
            sys::close(self.fd);
        }
    }
}
