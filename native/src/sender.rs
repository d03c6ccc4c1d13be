//! The socket sender: one background thread that owns the whole write side of the connections
//! attached to it. Per connection it keeps ONE ordered queue of items (copied bytes and file
//! ranges) and writes them with non-blocking sendmsg / sendfile, resuming short sends and waiting
//! for EPOLLOUT on EAGAIN. Progress, failures and finished detaches go to a sink as Reports.
//!
//! Why epoll and not io_uring: sendfile(2) has no io_uring opcode (a ring would need splice
//! through a pipe per connection), and an IORING_OP_SEND on a stream socket waits on its own
//! poll and may complete short, so a queue would still need resume logic. Readiness + plain
//! non-blocking calls map one to one onto "write what the socket takes, wait for EPOLLOUT".
//!
//! Invariants: every fd in here is a dup owned by this module (the socket's at attach, a file's
//! at enqueue), so a number it writes to can never belong to someone else; only the sender
//! thread closes them, after it stopped using them (detach, failure or exit), and it removes a
//! socket from epoll before closing it. Connection ids are never reused, so a stale event or
//! command for a detached id is ignored. The JS side never blocks on this thread: commands go
//! through a mutex held only to push or swap a Vec, plus an eventfd wake-up.
//!
//! Inline sends (`send_now`, called by sender_napi.rs on the JS thread): a small response may be
//! written by the JS thread itself, on this module's dup of the socket, skipping this thread's
//! wake-up and its report. Two more invariants keep that safe. The JS thread writes only while
//! none of the connection's items are with this thread (every one enqueued was reported finished
//! or dropped), so the two threads never write one socket at once and bytes stay in order. And
//! it writes only while the id is attached on its side: this thread closes a dup only after
//! Detach (or at exit), which the JS thread pushes after it forgot the id (or after it marked the
//! sender closed), so the number it writes to is still this connection's socket.

use crate::sys::{self, EpollEvent, Fd, IoVec, MsgHdr};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// epoll data of the wake-up eventfd; connection ids start at 1.
const WAKE_TOKEN: u64 = 0;
/// Bytes one connection may write per turn before the others get theirs (fairness).
const TURN_BYTES: u64 = 8 << 20;
/// Consecutive byte items (or inline buffers) gathered into one sendmsg.
pub const GATHER_MAX: usize = 64;
/// sendfile moves at most this much per call on Linux anyway.
const SENDFILE_MAX: u64 = 0x7fff_f000;

/// A private copy of `fd` (close-on-exec), or the errno.
pub fn dup(fd: i32) -> Result<Fd, i32> {
    // SAFETY: F_DUPFD_CLOEXEC only creates a new descriptor; an invalid fd fails with EBADF.
    let n = unsafe { sys::fcntl(fd, sys::F_DUPFD_CLOEXEC, 0) };
    if n < 0 { Err(sys::errno()) } else { Ok(Fd(n)) }
}

pub enum Item {
    Bytes { data: Vec<u8>, off: usize },
    File { fd: Fd, pos: u64, left: u64 },
}

impl Item {
    pub fn len(&self) -> u64 {
        match self {
            Item::Bytes { data, off } => (data.len() - off) as u64,
            Item::File { left, .. } => *left,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// `bytes` were written and `items` finished.
    Progress,
    /// A send failed with `errno`; the queue (`bytes`/`items` left) was dropped, later enqueues
    /// are dropped too until the connection is detached.
    Failed,
    /// Detach finished: the queue (`bytes`/`items`) was dropped and every fd of it closed.
    Detached,
}

pub struct Report {
    pub id: u64,
    pub kind: ReportKind,
    pub errno: i32,
    pub bytes: u64,
    pub items: u64,
}

pub type Sink = Box<dyn Fn(Vec<Report>) + Send>;

enum Cmd {
    Attach { id: u64, sock: Fd },
    Enqueue { id: u64, items: Vec<Item> },
    Detach { id: u64 },
}

struct Inbox {
    cmds: Vec<Cmd>,
    exit: bool,
}

pub struct Sender {
    inbox: Mutex<Inbox>,
    wake: Fd,
    /// A wake-up was written and the thread has not taken the inbox since: skip the syscall.
    wake_pending: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
}

struct Conn {
    sock: Fd,
    items: VecDeque<Item>,
    /// Waiting for EPOLLOUT (armed one-shot).
    blocked: bool,
    failed: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn epoll_ctl(ep: i32, op: i32, fd: i32, events: u32, data: u64) -> Result<(), i32> {
    let mut ev = EpollEvent { events, data };
    // SAFETY: ev is a valid epoll_event for the call.
    if unsafe { sys::epoll_ctl(ep, op, fd, &mut ev) } < 0 { Err(sys::errno()) } else { Ok(()) }
}

impl Sender {
    pub fn start(sink: Sink) -> Result<Arc<Sender>, i32> {
        // SAFETY: plain fd-creating syscalls; results are checked.
        let ep = unsafe { sys::epoll_create1(sys::O_CLOEXEC) };
        if ep < 0 { return Err(sys::errno()); }
        let ep = Fd(ep);
        let wake = sys::new_eventfd()?;
        epoll_ctl(ep.0, sys::EPOLL_CTL_ADD, wake.0, sys::EPOLLIN, WAKE_TOKEN)?;
        let sender = Arc::new(Sender { inbox: Mutex::new(Inbox { cmds: Vec::new(), exit: false }), wake, wake_pending: AtomicBool::new(false), thread: Mutex::new(None) });
        let worker = Arc::clone(&sender);
        let handle = std::thread::Builder::new()
            .name("sluice-sender".into())
            .stack_size(256 * 1024)
            .spawn(move || worker.run(ep, sink))
            .map_err(|_| sys::EAGAIN)?;
        *lock(&sender.thread) = Some(handle);
        Ok(sender)
    }

    pub fn attach(&self, id: u64, sock: Fd) { self.push(Cmd::Attach { id, sock }); }
    pub fn enqueue(&self, id: u64, items: Vec<Item>) { self.push(Cmd::Enqueue { id, items }); }
    pub fn detach(&self, id: u64) { self.push(Cmd::Detach { id }); }

    /// Stops the thread (dropping every queue and closing every fd) and waits for it. Idempotent.
    pub fn shutdown(&self) {
        lock(&self.inbox).exit = true;
        self.wake_thread();
        if let Some(h) = lock(&self.thread).take() { let _ = h.join(); }
    }

    fn push(&self, cmd: Cmd) {
        lock(&self.inbox).cmds.push(cmd);
        if !self.wake_pending.swap(true, Ordering::SeqCst) { self.wake_thread(); }
    }

    fn wake_thread(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd. It cannot fail short; an
        // EAGAIN (counter saturated) still leaves the fd readable, which is all that matters.
        unsafe { sys::write(self.wake.0, &one as *const u64 as *const _, 8) };
    }

    fn run(&self, ep: Fd, sink: Sink) {
        let mut conns: HashMap<u64, Conn> = HashMap::new();
        let mut ready: VecDeque<u64> = VecDeque::new();
        let mut events = [EpollEvent::default(); 64];
        let mut reports: Vec<Report> = Vec::new();
        loop {
            let timeout = if ready.is_empty() { -1 } else { 0 };
            // SAFETY: events has room for 64 entries.
            let n = unsafe { sys::epoll_wait(ep.0, events.as_mut_ptr(), 64, timeout) };
            for ev in &events[..n.max(0) as usize] {
                let id = ev.data;
                if id == WAKE_TOKEN { continue; }
                if let Some(c) = conns.get_mut(&id) {
                    if c.blocked { c.blocked = false; ready.push_back(id); }
                }
            }
            // Order matters: consume the wake-up, then clear the flag, then take the inbox. A push
            // that saw the flag set is in the inbox taken below; one that finds it clear writes a
            // fresh wake-up that the next epoll_wait sees. (Clearing before the read would let a
            // wake-up be consumed while the flag stays set, and later pushes would never wake us.)
            sys::clear_eventfd(&self.wake);
            self.wake_pending.store(false, Ordering::SeqCst);
            let (cmds, exit) = {
                let mut inbox = lock(&self.inbox);
                (std::mem::take(&mut inbox.cmds), inbox.exit)
            };
            if exit { return; } // dropping `conns` closes every fd; nobody is listening any more
            for cmd in cmds { apply(ep.0, cmd, &mut conns, &mut ready, &mut reports); }
            for _ in 0..ready.len() {
                let Some(id) = ready.pop_front() else { break };
                let Some(c) = conns.get_mut(&id) else { continue };
                if c.blocked || c.failed || c.items.is_empty() { continue; }
                if turn(ep.0, id, c, &mut reports) { ready.push_back(id); }
            }
            if !reports.is_empty() { sink(std::mem::take(&mut reports)); }
        }
    }
}

fn queued(items: &VecDeque<Item>) -> (u64, u64) {
    (items.iter().map(Item::len).sum(), items.len() as u64)
}

fn apply(ep: i32, cmd: Cmd, conns: &mut HashMap<u64, Conn>, ready: &mut VecDeque<u64>, reports: &mut Vec<Report>) {
    match cmd {
        Cmd::Attach { id, sock } => {
            // Registered disarmed-after-first-event (one-shot): it is re-armed only on EAGAIN,
            // so an idle or hung-up socket costs no wake-ups.
            if let Err(e) = epoll_ctl(ep, sys::EPOLL_CTL_ADD, sock.0, sys::EPOLLOUT | sys::EPOLLONESHOT, id) {
                reports.push(Report { id, kind: ReportKind::Failed, errno: e, bytes: 0, items: 0 });
                conns.insert(id, Conn { sock, items: VecDeque::new(), blocked: false, failed: true });
                return;
            }
            conns.insert(id, Conn { sock, items: VecDeque::new(), blocked: false, failed: false });
        }
        Cmd::Enqueue { id, items } => {
            let Some(c) = conns.get_mut(&id) else { return };
            if c.failed {
                let (bytes, n) = queued(&items.into_iter().collect());
                reports.push(Report { id, kind: ReportKind::Failed, errno: 0, bytes, items: n });
                return;
            }
            let was_idle = c.items.is_empty();
            c.items.extend(items);
            if was_idle && !c.blocked { ready.push_back(id); }
        }
        Cmd::Detach { id } => {
            let Some(c) = conns.remove(&id) else { return };
            let (bytes, items) = queued(&c.items);
            // Out of epoll before the fd is closed (by dropping `c`), so its number can be reused.
            let _ = epoll_ctl(ep, sys::EPOLL_CTL_DEL, c.sock.0, 0, 0);
            drop(c);
            reports.push(Report { id, kind: ReportKind::Detached, errno: 0, bytes, items });
        }
    }
}

enum Step {
    Sent(u64),
    Blocked,
    Failed(i32),
}

/// Writes from the front of the queue until it is empty, the socket is full or the turn is
/// used up; true = more to write now (the connection goes back in the ready queue).
fn turn(ep: i32, id: u64, c: &mut Conn, reports: &mut Vec<Report>) -> bool {
    let (mut bytes, mut items) = (0u64, 0u64);
    let step = loop {
        if c.items.is_empty() || bytes >= TURN_BYTES { break Step::Sent(0); }
        match send_front(c.sock.0, &mut c.items, TURN_BYTES - bytes) {
            Step::Sent(n) => {
                bytes += n;
                items += pop_finished(&mut c.items);
            }
            other => break other,
        }
    };
    if bytes > 0 { reports.push(Report { id, kind: ReportKind::Progress, errno: 0, bytes, items }); }
    match step {
        Step::Sent(_) => !c.items.is_empty(),
        Step::Blocked => match epoll_ctl(ep, sys::EPOLL_CTL_MOD, c.sock.0, sys::EPOLLOUT | sys::EPOLLONESHOT, id) {
            Ok(()) => { c.blocked = true; false }
            Err(e) => { fail(id, c, e, reports); false }
        },
        Step::Failed(e) => { fail(id, c, e, reports); false }
    }
}

fn fail(id: u64, c: &mut Conn, errno: i32, reports: &mut Vec<Report>) {
    let (bytes, items) = queued(&c.items);
    c.items.clear(); // closes the dup'd file fds
    c.failed = true;
    reports.push(Report { id, kind: ReportKind::Failed, errno, bytes, items });
}

fn pop_finished(items: &mut VecDeque<Item>) -> u64 {
    let mut n = 0;
    while items.front().is_some_and(|i| i.len() == 0) {
        items.pop_front();
        n += 1;
    }
    n
}

/// One non-blocking send of the queue's front: a gather of byte items, or one file range.
fn send_front(sock: i32, items: &mut VecDeque<Item>, budget: u64) -> Step {
    let r = match items.front_mut() {
        Some(Item::File { fd, pos, left }) => {
            let count = (*left).min(budget).min(SENDFILE_MAX) as usize;
            let mut off = *pos as i64;
            // SAFETY: both fds are ours (dups); off is a valid in/out offset.
            let r = unsafe { sys::sendfile(sock, fd.0, &mut off, count) };
            if r == 0 { return Step::Failed(sys::ENODATA); } // the file ends before the range does
            if r > 0 { *pos += r as u64; *left -= r as u64; }
            r
        }
        Some(Item::Bytes { .. }) => gather_send(sock, items),
        None => return Step::Sent(0),
    };
    if r >= 0 { return Step::Sent(r as u64); }
    match sys::errno() {
        sys::EAGAIN => Step::Blocked,
        sys::EINTR => Step::Sent(0),
        e => Step::Failed(e),
    }
}

/// One non-blocking sendmsg of `iov` (MSG_NOSIGNAL: a closed peer is an EPIPE, never a signal).
///
/// # Safety
/// Every IoVec must name bytes alive and unmodified for the call.
unsafe fn send_iov(sock: i32, iov: &[IoVec], more: bool) -> isize {
    let msg = MsgHdr { name: core::ptr::null_mut(), namelen: 0, iov: iov.as_ptr(), iovlen: iov.len(), control: core::ptr::null_mut(), controllen: 0, flags: 0 };
    let flags = sys::MSG_NOSIGNAL | sys::MSG_DONTWAIT | if more { sys::MSG_MORE } else { 0 };
    sys::sendmsg(sock, &msg, flags)
}

/// Writes what the socket takes of `iov` at once, on the calling thread (an inline send, see the
/// header for when the JS thread may): Ok(bytes written), 0 when the socket is full; Err(errno)
/// when the socket failed.
///
/// # Safety
/// As send_iov; `sock` must be a connection's dup that this thread does not write at the moment.
pub unsafe fn send_now(sock: i32, iov: &[IoVec]) -> Result<u64, i32> {
    let r = send_iov(sock, iov, false);
    if r >= 0 { return Ok(r as u64); }
    match sys::errno() {
        sys::EAGAIN | sys::EINTR => Ok(0),
        e => Err(e),
    }
}

/// sendmsg over the leading run of byte items; MSG_MORE when a file range follows, so a
/// response header and its records leave in the same segments despite TCP_NODELAY.
fn gather_send(sock: i32, items: &mut VecDeque<Item>) -> isize {
    let mut iov: [IoVec; GATHER_MAX] = [IoVec { base: core::ptr::null(), len: 0 }; GATHER_MAX];
    let mut n = 0;
    for item in items.iter() {
        let Item::Bytes { data, off } = item else { break };
        if n == GATHER_MAX { break; }
        iov[n] = IoVec { base: data[*off..].as_ptr(), len: data.len() - off };
        n += 1;
    }
    // SAFETY: the n iovecs name byte items owned by `items`, alive for the call.
    let r = unsafe { send_iov(sock, &iov[..n], items.len() > n) };
    let mut left = if r > 0 { r as usize } else { 0 };
    for item in items.iter_mut() {
        if left == 0 { break; }
        let Item::Bytes { data, off } = item else { break };
        let take = left.min(data.len() - *off);
        *off += take;
        left -= take;
    }
    r
}
