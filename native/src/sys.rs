//! The few libc functions and Linux constants the addon needs, declared by hand (no libc crate
//! is reachable offline). Only Linux is supported; io_uring's syscall numbers are the same on
//! every architecture since they were added (5.1), so no per-arch table is needed.

use core::ffi::{c_int, c_long, c_void};

extern "C" {
    pub fn syscall(num: c_long, ...) -> c_long;
    pub fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, off: i64) -> *mut c_void;
    pub fn munmap(addr: *mut c_void, len: usize) -> c_int;
    pub fn close(fd: c_int) -> c_int;
    fn __errno_location() -> *mut c_int;
    // Used by the socket sender (sender.rs).
    pub fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
    pub fn read(fd: c_int, buf: *mut c_void, len: usize) -> isize;
    pub fn write(fd: c_int, buf: *const c_void, len: usize) -> isize;
    pub fn eventfd(initval: u32, flags: c_int) -> c_int;
    pub fn epoll_create1(flags: c_int) -> c_int;
    pub fn epoll_ctl(epfd: c_int, op: c_int, fd: c_int, event: *mut EpollEvent) -> c_int;
    pub fn epoll_wait(epfd: c_int, events: *mut EpollEvent, max: c_int, timeout_ms: c_int) -> c_int;
    pub fn sendmsg(fd: c_int, msg: *const MsgHdr, flags: c_int) -> isize;
    /// off_t is 64-bit on every 64-bit Linux target (the only ones built for).
    pub fn getrlimit(resource: c_int, rlim: *mut RLimit) -> c_int;
    pub fn setrlimit(resource: c_int, rlim: *const RLimit) -> c_int;
    pub fn sendfile(out_fd: c_int, in_fd: c_int, offset: *mut i64, count: usize) -> isize;
    pub fn preadv2(fd: c_int, iov: *const IoVec, iovcnt: c_int, offset: i64, flags: c_int) -> isize;
}

const _: () = assert!(core::mem::size_of::<usize>() == 8, "sendfile's off_t is declared as i64: 64-bit targets only");

pub const SYS_IO_URING_SETUP: c_long = 425;
pub const SYS_IO_URING_ENTER: c_long = 426;
pub const SYS_IO_URING_REGISTER: c_long = 427;

pub const PROT_READ: c_int = 1;
pub const PROT_WRITE: c_int = 2;
pub const MAP_SHARED: c_int = 1;
pub const MAP_POPULATE: c_int = 0x8000;
pub const MAP_FAILED: *mut c_void = !0usize as *mut c_void;

pub const EINTR: i32 = 4;
pub const EIO: i32 = 5;
pub const EAGAIN: i32 = 11;
pub const EBUSY: i32 = 16;
pub const ENODATA: i32 = 61;
pub const ECANCELED: i32 = 125;

pub const RLIMIT_NOFILE: c_int = 7;
pub const RLIM_INFINITY: u64 = !0;

/// struct rlimit (rlim_t is 64-bit on the 64-bit Linux targets the addon builds for).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct RLimit {
    pub cur: u64,
    pub max: u64,
}

pub const F_DUPFD_CLOEXEC: c_int = 1030;
pub const O_CLOEXEC: c_int = 0o2000000;
pub const EFD_NONBLOCK: c_int = 0o4000;
pub const EPOLL_CTL_ADD: c_int = 1;
pub const EPOLL_CTL_DEL: c_int = 2;
pub const EPOLL_CTL_MOD: c_int = 3;
pub const EPOLLIN: u32 = 0x1;
pub const EPOLLOUT: u32 = 0x4;
pub const EPOLLONESHOT: u32 = 1 << 30;
pub const MSG_DONTWAIT: c_int = 0x40;
pub const MSG_NOSIGNAL: c_int = 0x4000;
pub const MSG_MORE: c_int = 0x8000;
/// preadv2: fail with EAGAIN instead of waiting for the disk (the bytes are not in the page cache).
pub const RWF_NOWAIT: c_int = 0x8;

/// struct epoll_event: the kernel packs it on x86-64 only (12 bytes there, 16 elsewhere).
#[cfg_attr(target_arch = "x86_64", repr(C, packed))]
#[cfg_attr(not(target_arch = "x86_64"), repr(C))]
#[derive(Clone, Copy, Default)]
pub struct EpollEvent {
    pub events: u32,
    pub data: u64,
}

/// struct msghdr (glibc layout; repr(C) inserts the padding after msg_namelen).
#[repr(C)]
pub struct MsgHdr {
    pub name: *mut c_void,
    pub namelen: u32,
    pub iov: *const IoVec,
    pub iovlen: usize,
    pub control: *mut c_void,
    pub controllen: usize,
    pub flags: c_int,
}

/// IOV_MAX on Linux: a WRITEV longer than this fails with EINVAL.
pub const IOV_MAX: usize = 1024;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct IoVec {
    pub base: *const u8,
    pub len: usize,
}

/// An fd the addon owns (a dup, or an eventfd/epoll fd it made); closed on drop.
pub struct Fd(pub i32);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by this value and closed only here.
        unsafe { close(self.0) };
    }
}

/// A fresh non-blocking, close-on-exec eventfd, or the errno.
pub fn new_eventfd() -> Result<Fd, i32> {
    // SAFETY: eventfd only creates a descriptor.
    let fd = unsafe { eventfd(0, O_CLOEXEC | EFD_NONBLOCK) };
    if fd < 0 { Err(errno()) } else { Ok(Fd(fd)) }
}

/// Resets a non-blocking eventfd's counter (nothing to reset is not an error).
pub fn clear_eventfd(fd: &Fd) {
    let mut v = 0u64;
    // SAFETY: reads at most 8 bytes into a live u64 from a non-blocking eventfd.
    unsafe { read(fd.0, &mut v as *mut u64 as *mut c_void, 8) };
}

/// errno of the last failed libc call on this thread.
pub fn errno() -> i32 {
    // SAFETY: __errno_location always returns a valid pointer to this thread's errno.
    unsafe { *__errno_location() }
}

/// The symbolic name Node would give an errno, so JS sees the same `code` from both backends.
pub fn errno_name(e: i32) -> String {
    let name = match e {
        1 => "EPERM",
        2 => "ENOENT",
        4 => "EINTR",
        5 => "EIO",
        6 => "ENXIO",
        9 => "EBADF",
        11 => "EAGAIN",
        12 => "ENOMEM",
        13 => "EACCES",
        14 => "EFAULT",
        16 => "EBUSY",
        21 => "EISDIR",
        22 => "EINVAL",
        24 => "EMFILE",
        27 => "EFBIG",
        28 => "ENOSPC",
        29 => "ESPIPE",
        30 => "EROFS",
        32 => "EPIPE",
        61 => "ENODATA",
        104 => "ECONNRESET",
        110 => "ETIMEDOUT",
        111 => "ECONNREFUSED",
        88 => "ENOTSOCK",
        38 => "ENOSYS",
        75 => "EOVERFLOW",
        95 => "EOPNOTSUPP",
        122 => "EDQUOT",
        125 => "ECANCELED",
        _ => return format!("E{e}"),
    };
    name.to_string()
}
