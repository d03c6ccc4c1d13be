//! The commit engine behind one ring: turns a commit (positioned writev ops + fds to fdatasync)
//! into io_uring submissions, follows their completions (short writes resubmitted, errors
//! recorded) and reports each finished commit. A commit may also ask for an intermediate report
//! once all its writes landed, while its linked fdatasyncs still run: one submission, yet the
//! caller can act between write and sync.
//!
//! Thread: everything runs on the one JS thread that opened the ring. The ring posts to an
//! eventfd (IORING_REGISTER_EVENTFD) for every completion; the bindings watch that descriptor from
//! the thread's own event loop and call `complete()` when it is readable. There is no completion
//! thread: one behind each ring woke once per commit only to hand the completion on to the JS
//! thread, which then woke again (one context switch and one cross-thread queue per commit).
//!
//! A commit may also start writeback of file ranges (sync_file_range's SYNC_FILE_RANGE_WRITE):
//! advisory, so their failures are not the commit's, and they run last in their fd's chain.
//!
//! Ordering choice: each fd's ops form one IO_LINK chain (its writes in commit order, then its
//! fdatasync, then its writeback ranges). A link makes the sync start only after that fd's writes
//! succeeded, and a failed or short write cancels the rest of the chain, so a sync is never
//! counted for an fd whose data did not land. IO_DRAIN was rejected: it orders against *every*
//! earlier SQE of the ring, which would serialize independent fds and pipelined commits; chains of
//! different fds run in parallel.
//!
//! Invariants: a commit is reported as `Report::Done` exactly once, and only after every SQE it
//! submitted has completed (so the buffers its iovecs point at may be released then); a commit
//! that asked for it is reported as `Report::Written` at most once, exactly when every one of its
//! write ops completed in full (a short write counts once its resubmitted remainder did) and none
//! failed, and always before its `Done` (both come out of `complete()`, in order); in-flight ops
//! never exceed the SQ size, so push() cannot fail and the CQ (twice the SQ) cannot overflow.

use crate::sys::{self, IoVec};
use crate::uring::{self, Cqe, Sqe, Uring};
use core::cell::{RefCell, RefMut};
use std::collections::HashMap;

/// user_data packs (commit id, chain index, op index); indexes are < 2^16 because ops per
/// commit are bounded by the SQ size (at most 32768 entries).
const MAX_ENTRIES: u32 = 32768;

pub struct WriteSpec {
    pub fd: i32,
    pub position: u64,
    pub iov: Vec<IoVec>,
}

/// A file range whose dirty pages should start going to disk.
pub struct WritebackSpec {
    pub fd: i32,
    pub offset: u64,
    pub len: u32,
}

pub struct Done {
    pub token: usize,
    /// (errno, what failed) of the first failure, None on success.
    pub error: Option<(i32, String)>,
}

/// What `complete()` reports about a commit.
pub enum Report {
    /// Every write op of the commit landed; its syncs may still run. Its buffers stay pinned.
    Written(usize),
    /// The commit finished: every SQE completed.
    Done(Done),
}

/// Why a commit was refused before anything was submitted.
pub struct Refused {
    pub code: &'static str,
    pub message: String,
}

enum OpKind {
    Write { iov: Vec<IoVec>, position: u64, remaining: u64 },
    Sync,
    Writeback { offset: u64, len: u32 },
}

struct Op {
    kind: OpKind,
    done: bool,
}

struct Chain {
    fd: i32,
    ops: Vec<Op>,
    inflight: u32,
    /// A short write is waiting for the rest of the chain's (cancelled) completions before the
    /// remainder is resubmitted.
    retry: bool,
    failed: bool,
}

struct Commit {
    token: usize,
    chains: Vec<Chain>,
    open_chains: usize,
    ops: u32,
    bytes: u64,
    /// Write ops not yet completed in full; one that failed never is, so it stays above zero.
    writes_left: u32,
    /// A `Report::Written` is asked for and not yet sent.
    report_written: bool,
    error: Option<(i32, String)>,
}

struct State {
    ring: Uring,
    commits: HashMap<u32, Commit>,
    next_id: u32,
    inflight_ops: u32,
    inflight_bytes: u64,
    closing: bool,
    /// complete()'s buffer, kept for its capacity.
    cqes: Vec<Cqe>,
}

pub struct Engine {
    state: RefCell<State>,
    /// Readable while completions wait to be reaped; the ring's, closed with it.
    event_fd: sys::Fd,
    max_bytes: u64,
}

fn iov_bytes(iov: &[IoVec]) -> u64 {
    iov.iter().map(|v| v.len as u64).sum()
}

/// Drops the first `n` bytes of an iovec list (resuming a short write).
fn advance(iov: &mut Vec<IoVec>, mut n: u64) {
    let mut skip = 0;
    for v in iov.iter_mut() {
        if n < v.len as u64 {
            // SAFETY: n < v.len, so the new base stays inside the same JS buffer.
            v.base = unsafe { v.base.add(n as usize) };
            v.len -= n as usize;
            break;
        }
        n -= v.len as u64;
        skip += 1;
    }
    iov.drain(..skip);
}

fn build_chains(writes: Vec<WriteSpec>, sync_fds: &[i32], writeback: &[WritebackSpec]) -> Vec<Chain> {
    let mut chains: Vec<Chain> = Vec::new();
    let mut by_fd: HashMap<i32, usize> = HashMap::new();
    let mut chain_of = |fd: i32, chains: &mut Vec<Chain>| -> usize {
        *by_fd.entry(fd).or_insert_with(|| {
            chains.push(Chain { fd, ops: Vec::new(), inflight: 0, retry: false, failed: false });
            chains.len() - 1
        })
    };
    for w in writes {
        let mut position = w.position;
        let iov: Vec<IoVec> = w.iov.into_iter().filter(|v| v.len > 0).collect();
        for part in iov.chunks(sys::IOV_MAX) {
            let remaining = iov_bytes(part);
            let ci = chain_of(w.fd, &mut chains);
            chains[ci].ops.push(Op { kind: OpKind::Write { iov: part.to_vec(), position, remaining }, done: false });
            position += remaining;
        }
    }
    for &fd in sync_fds {
        let ci = chain_of(fd, &mut chains);
        let chain = &mut chains[ci];
        if !matches!(chain.ops.last(), Some(Op { kind: OpKind::Sync, .. })) {
            chain.ops.push(Op { kind: OpKind::Sync, done: false });
        }
    }
    for w in writeback.iter().filter(|w| w.len > 0) {
        let ci = chain_of(w.fd, &mut chains);
        chains[ci].ops.push(Op { kind: OpKind::Writeback { offset: w.offset, len: w.len }, done: false });
    }
    chains
}

/// Pushes the chain's unfinished ops as one linked sequence; returns how many were pushed.
fn push_chain(ring: &mut Uring, id: u32, ci: usize, chain: &mut Chain) -> u32 {
    let pending: Vec<usize> = (0..chain.ops.len()).filter(|&i| !chain.ops[i].done).collect();
    for (k, &oi) in pending.iter().enumerate() {
        let user_data = ((id as u64) << 32) | ((ci as u64) << 16) | oi as u64;
        let link = if k + 1 < pending.len() { uring::SQE_IO_LINK } else { 0 };
        let sqe = match &chain.ops[oi].kind {
            OpKind::Write { iov, position, .. } => Sqe { opcode: uring::OP_WRITEV, flags: link, fd: chain.fd, off: *position, addr: iov.as_ptr() as u64, len: iov.len() as u32, user_data, ..Default::default() },
            OpKind::Sync => Sqe { opcode: uring::OP_FSYNC, flags: link, fd: chain.fd, op_flags: uring::FSYNC_DATASYNC, user_data, ..Default::default() },
            OpKind::Writeback { offset, len } => Sqe { opcode: uring::OP_SYNC_FILE_RANGE, flags: link, fd: chain.fd, off: *offset, len: *len, op_flags: uring::SYNC_FILE_RANGE_WRITE, user_data, ..Default::default() },
        };
        let pushed = ring.push(sqe);
        debug_assert!(pushed, "in-flight ops are bounded by the SQ size");
    }
    chain.inflight += pending.len() as u32;
    pending.len() as u32
}

impl Engine {
    /// Sets up the ring and the eventfd it posts each completion to (`event_fd`).
    pub fn start(entries: u32, max_bytes: u64) -> Result<Engine, i32> {
        let ring = Uring::new(entries.clamp(1, MAX_ENTRIES))?;
        let event_fd = sys::new_eventfd()?;
        ring.register_eventfd(event_fd.0)?;
        let state = State { ring, commits: HashMap::new(), next_id: 0, inflight_ops: 0, inflight_bytes: 0, closing: false, cqes: Vec::new() };
        Ok(Engine { state: RefCell::new(state), event_fd, max_bytes })
    }

    /// The descriptor to watch: readable once a completion waits for `complete()`.
    pub fn event_fd(&self) -> i32 {
        self.event_fd.0
    }

    fn state(&self) -> RefMut<'_, State> {
        // Reports are handed out only after the borrow ends, so a callback that commits again
        // never finds it taken.
        self.state.borrow_mut()
    }

    /// Submits one commit; `report_written` asks for a `Report::Written` before its `Done` (with
    /// no bytes to write, at its first completion). Ok(false): nothing to do (no bytes, no syncs),
    /// nothing is reported.
    pub fn commit(&self, writes: Vec<WriteSpec>, sync_fds: &[i32], writeback: &[WritebackSpec], token: usize, report_written: bool) -> Result<bool, Refused> {
        let mut chains = build_chains(writes, sync_fds, writeback);
        if chains.iter().all(|c| c.ops.is_empty()) {
            return Ok(false);
        }
        chains.retain(|c| !c.ops.is_empty());
        let ops: u32 = chains.iter().map(|c| c.ops.len() as u32).sum();
        let writes_left = chains.iter().flat_map(|c| &c.ops).filter(|o| matches!(o.kind, OpKind::Write { .. })).count() as u32;
        let bytes: u64 = chains.iter().flat_map(|c| &c.ops).map(|o| match &o.kind { OpKind::Write { remaining, .. } => *remaining, OpKind::Sync | OpKind::Writeback { .. } => 0 }).sum();
        let mut st = self.state();
        self.admit(&st, ops, bytes)?;
        let id = loop {
            let id = st.next_id;
            st.next_id = st.next_id.wrapping_add(1) & 0x7FFF_FFFF;
            if !st.commits.contains_key(&id) { break id; }
        };
        let mut pushed = 0;
        let st = &mut *st;
        for (ci, chain) in chains.iter_mut().enumerate() {
            pushed += push_chain(&mut st.ring, id, ci, chain);
        }
        if let Err(e) = st.ring.submit() {
            if st.ring.rewind(pushed) {
                return Err(Refused { code: "ERR_SLUICE_URING_SUBMIT", message: format!("io_uring submit failed: {}", sys::errno_name(e)) });
            }
            // Some SQEs reached the kernel: the commit must be followed to its end; complete()
            // resubmits what is left in the SQ.
        }
        let open_chains = chains.len();
        st.commits.insert(id, Commit { token, chains, open_chains, ops, bytes, writes_left, report_written, error: None });
        st.inflight_ops += ops;
        st.inflight_bytes += bytes;
        Ok(true)
    }

    fn admit(&self, st: &State, ops: u32, bytes: u64) -> Result<(), Refused> {
        if st.closing {
            return Err(Refused { code: "ERR_SLUICE_RING_CLOSED", message: "io_uring ring is closed".into() });
        }
        let max_ops = st.ring.sq_entries;
        if ops > max_ops || bytes > self.max_bytes {
            return Err(Refused { code: "ERR_SLUICE_COMMIT_TOO_LARGE", message: format!("commit of {ops} ring operations / {bytes} bytes exceeds the ring's limits ({max_ops} operations, {} bytes)", self.max_bytes) });
        }
        if st.inflight_ops + ops > max_ops || st.inflight_bytes + bytes > self.max_bytes {
            return Err(Refused { code: "ERR_SLUICE_RING_FULL", message: format!("io_uring ring full: {} operations / {} bytes in flight, commit needs {ops} / {bytes} (limits {max_ops} / {})", st.inflight_ops, st.inflight_bytes, self.max_bytes) });
        }
        Ok(())
    }

    /// Reaps every completion waiting in the CQ and appends what it finished to `reports`.
    pub fn complete(&self, reports: &mut Vec<Report>) {
        // The eventfd is reset before the CQ is read: a completion posted after the read below
        // signals it again, so none is left waiting with the descriptor quiet.
        sys::clear_eventfd(&self.event_fd);
        let mut st = self.state();
        let mut cqes = std::mem::take(&mut st.cqes);
        st.ring.reap(&mut cqes);
        for cqe in cqes.drain(..) { Self::on_cqe(&mut st, cqe, reports); }
        st.cqes = cqes;
        if st.ring.pending() > 0 { let _ = st.ring.submit(); }
    }

    /// Refuses new commits and blocks until the in-flight ones finished, appending their reports
    /// to `reports` (the buffers they point at must stay alive until then). Idempotent.
    pub fn shutdown(&self, reports: &mut Vec<Report>) {
        self.state().closing = true;
        loop {
            self.complete(reports);
            let st = self.state();
            if st.commits.is_empty() { return; }
            if let Err(e) = st.ring.wait() {
                // Not expected on a live ring; avoid spinning while it persists.
                if e != sys::EAGAIN && e != sys::EBUSY { std::thread::sleep(std::time::Duration::from_millis(1)); }
            }
        }
    }

    fn on_cqe(st: &mut State, cqe: Cqe, reports: &mut Vec<Report>) {
        let id = (cqe.user_data >> 32) as u32;
        let (ci, oi) = (((cqe.user_data >> 16) & 0xFFFF) as usize, (cqe.user_data & 0xFFFF) as usize);
        let Some(commit) = st.commits.get_mut(&id) else { return };
        let chain = &mut commit.chains[ci];
        chain.inflight -= 1;
        let fd = chain.fd;
        let op = &mut chain.ops[oi];
        let failure = match (&mut op.kind, cqe.res) {
            (_, r) if r == -sys::ECANCELED && (chain.retry || chain.failed) => None,
            (OpKind::Write { .. }, r) if r < 0 => Some((-r, format!("write fd {fd}"))),
            (OpKind::Sync, r) if r < 0 => Some((-r, format!("fdatasync fd {fd}"))),
            (OpKind::Sync, _) => { op.done = true; None }
            // Advisory: a range that could not start writing back is written by the next sync.
            (OpKind::Writeback { .. }, _) => { op.done = true; None }
            (OpKind::Write { remaining, .. }, r) if r as u64 >= *remaining => {
                op.done = true;
                commit.writes_left -= 1;
                None
            }
            (OpKind::Write { .. }, 0) => Some((sys::EIO, format!("write fd {fd}: no progress"))),
            (OpKind::Write { iov, position, remaining }, r) => {
                advance(iov, r as u64);
                *position += r as u64;
                *remaining -= r as u64;
                chain.retry = true;
                None
            }
        };
        if let Some(f) = failure {
            chain.failed = true;
            commit.error.get_or_insert(f);
        }
        if commit.report_written && commit.writes_left == 0 {
            commit.report_written = false;
            reports.push(Report::Written(commit.token));
        }
        if chain.inflight > 0 { return; }
        if chain.retry && !chain.failed {
            chain.retry = false;
            push_chain(&mut st.ring, id, ci, chain);
            if let Err(e) = st.ring.submit() {
                if st.ring.rewind(chain.inflight) {
                    chain.inflight = 0;
                    chain.failed = true;
                    commit.error.get_or_insert((e, format!("resubmit write fd {fd}")));
                } else {
                    return;
                }
            } else {
                return;
            }
        }
        commit.open_chains -= 1;
        if commit.open_chains > 0 { return; }
        if let Some(c) = st.commits.remove(&id) {
            st.inflight_ops -= c.ops;
            st.inflight_bytes -= c.bytes;
            reports.push(Report::Done(Done { token: c.token, error: c.error }));
        }
    }
}
