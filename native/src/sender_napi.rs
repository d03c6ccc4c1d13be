//! JS bindings of the socket sender (sender.rs), one sender per JS thread that opens it (stored
//! as the env's instance data):
//!   senderOpen(onReport(id, bytes, items, status), maxConns, maxConnBytes, maxConnItems, maxItems)
//!     status: null = progress, 'detached' = detach done (fds closed), else an errno name
//!     (the queue was dropped; JS should close the connection).
//!   senderAttach(fd) -> id      dup()s the socket fd; throws ERR_SLUICE_SENDER_FULL at maxConns
//!   senderEnqueue(id, meta: Float64Array [fd, position, length]*, bufs: Buffer[])
//!     fd -1 = the next Buffer of bufs (copied now); else a file range whose fd is dup()ed now,
//!     so the caller may close its own fd as soon as this returns. Throws
//!     ERR_SLUICE_SEND_QUEUE_FULL past the limits, ERR_SLUICE_SEND_FAILED after a failure.
//!   senderTrySend(id, meta, bufs) -> bytes written now, on this thread, by one non-blocking
//!     sendmsg on the sender's dup of the socket; meta and bufs as for senderEnqueue (at most
//!     GATHER_MAX chunks, INLINE_MAX_BYTES in all). File ranges are read first with
//!     preadv2(RWF_NOWAIT), so only bytes already in the page cache are sent this way. Returns 0,
//!     sending nothing, when the socket is full, when anything of this connection is still with
//!     the sender thread (its earlier bytes must leave first), or when a range is not all cached;
//!     the caller enqueues what was not written. Throws ERR_SLUICE_SEND_FAILED after a failure,
//!     or the errno's name when this send failed (the connection is then failed as after a
//!     'failed' report: JS should close it).
//!   senderDetach(id)            drops the queue; reported as 'detached' once the fds are closed.
//! Accounting (queued bytes/items per connection, the limits, whether the threadsafe function
//! keeps the loop alive) lives here, on the JS thread only: incremented at enqueue, decremented
//! when a report is delivered, so it never races the sender thread.

use crate::js;
use crate::napi::*;
use crate::sender::{self, Item, Report, ReportKind, Sender};
use crate::sys::{self, IoVec};
use core::cell::UnsafeCell;
use core::ffi::c_void;
use core::ptr;
use std::collections::HashMap;
use std::sync::Arc;

struct Acct {
    bytes: u64,
    items: u64,
    failed: bool,
    /// The sender's dup of the socket, for inline sends: open while this entry exists (see the
    /// inline-send invariants in sender.rs).
    sock: i32,
}

struct Limits {
    conns: usize,
    conn_bytes: u64,
    conn_items: u64,
    items: u64,
}

struct State {
    /// None until started (and if the thread could not start).
    sender: Option<Arc<Sender>>,
    tsfn: napi_threadsafe_function,
    limits: Limits,
    conns: HashMap<u64, Acct>,
    next_id: u64,
    /// Items queued in every connection (bounds memory and dup'd fds).
    items: u64,
    /// Queued items + pending detaches: while > 0 the tsfn keeps the event loop alive.
    outstanding: u64,
    closed: bool,
    /// Where inline sends read their file ranges: kept across calls, so an answer sent inline
    /// allocates and zeroes nothing once the buffer has grown to the largest one (at most
    /// INLINE_MAX_BYTES).
    scratch: Vec<u8>,
}

/// JS-thread state shared by the instance data and the tsfn's context (whichever is freed last
/// drops it).
struct Front(UnsafeCell<State>);

// SAFETY: the State is only ever touched on the JS thread of its env (bindings, deliver, env
// cleanup); the Arc crosses threads only as an opaque pointer held by N-API.
unsafe impl Send for Front {}
unsafe impl Sync for Front {}

impl Front {
    #[allow(clippy::mut_from_ref)]
    fn state(&self) -> &mut State {
        // SAFETY: see the Sync impl: single-threaded use, and no caller holds two borrows.
        unsafe { &mut *self.0.get() }
    }
}

fn outstanding_add(env: napi_env, st: &mut State, n: u64) {
    if st.outstanding == 0 && n > 0 {
        // SAFETY: tsfn is alive while the front is not closed (callers check).
        unsafe { napi_ref_threadsafe_function(env, st.tsfn) };
    }
    st.outstanding += n;
}

fn outstanding_sub(env: napi_env, st: &mut State, n: u64) {
    st.outstanding -= n.min(st.outstanding);
    if st.outstanding == 0 && n > 0 && !st.closed {
        // SAFETY: as above.
        unsafe { napi_unref_threadsafe_function(env, st.tsfn) };
    }
}

unsafe extern "C" fn drop_front(_env: napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: data is one Arc<Front> leaked for the instance data or the tsfn; released once.
    drop(Arc::from_raw(data as *const Front));
}

unsafe extern "C" fn env_cleanup(arg: *mut c_void) {
    // SAFETY: arg is the Front the instance data keeps alive until env teardown ends; this hook
    // was registered after the tsfn, so it runs before the tsfn's own cleanup.
    let st = (*(arg as *const Front)).state();
    st.closed = true;
    if let Some(s) = &st.sender { s.shutdown(); }
    napi_release_threadsafe_function(st.tsfn, TSFN_RELEASE);
}

/// Runs on the JS thread for each batch of reports.
unsafe extern "C" fn deliver(env: napi_env, cb: napi_value, context: *mut c_void, data: *mut c_void) {
    // SAFETY: data is the Box<Vec<Report>> the sink leaked; context the tsfn's Arc<Front>.
    let reports = Box::from_raw(data as *mut Vec<Report>);
    if env.is_null() { return; }
    let st = (*(context as *const Front)).state();
    let mut undefined = ptr::null_mut();
    napi_get_undefined(env, &mut undefined);
    for r in reports.iter() {
        let status = match r.kind {
            ReportKind::Progress => js::null(env),
            ReportKind::Detached => js::string(env, "detached"),
            ReportKind::Failed => js::string(env, &sys::errno_name(if r.errno == 0 { sys::EIO } else { r.errno })),
        };
        st.items -= r.items.min(st.items);
        let settled = r.items + u64::from(r.kind == ReportKind::Detached);
        outstanding_sub(env, st, settled);
        if r.kind != ReportKind::Detached {
            let Some(a) = st.conns.get_mut(&r.id) else { continue }; // detached meanwhile
            a.bytes -= r.bytes.min(a.bytes);
            a.items -= r.items.min(a.items);
            if r.kind == ReportKind::Failed { a.failed = true; }
        }
        let argv = [js::double(env, r.id as f64), js::double(env, r.bytes as f64), js::double(env, r.items as f64), status];
        napi_call_function(env, undefined, cb, 4, argv.as_ptr(), ptr::null_mut());
    }
}

/// The open sender of this env and its state.
fn front(env: napi_env) -> js::JsResult<(&'static mut State, Arc<Sender>)> {
    let mut data = ptr::null_mut();
    // SAFETY: valid out-param.
    if unsafe { napi_get_instance_data(env, &mut data) } != NAPI_OK || data.is_null() {
        return Err("the sender is not open (call senderOpen first)");
    }
    // SAFETY: only sender_open sets instance data, to a Front kept alive until env teardown.
    let st = unsafe { (*(data as *const Front)).state() };
    match &st.sender {
        Some(s) if !st.closed => { let s = Arc::clone(s); Ok((st, s)) }
        _ => Err("the sender is closed"),
    }
}

fn limit(env: napi_env, v: napi_value) -> js::JsResult<f64> {
    let n = js::number(env, v)?;
    if n >= 1.0 && n <= 9007199254740991.0 && n.fract() == 0.0 { Ok(n) } else { Err("limits must be positive integers") }
}

pub unsafe extern "C" fn sender_open(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<5>(env, info).and_then(|[cb, c, cb_, ci, i]| {
        Ok((cb, Limits { conns: limit(env, c)? as usize, conn_bytes: limit(env, cb_)? as u64, conn_items: limit(env, ci)? as u64, items: limit(env, i)? as u64 }))
    });
    let Ok((cb, limits)) = parsed else { return js::throw(env, "ERR_INVALID_ARG_TYPE", "senderOpen(onReport, maxConns, maxConnBytes, maxConnItems, maxItems)") };
    let mut existing = ptr::null_mut();
    if napi_get_instance_data(env, &mut existing) == NAPI_OK && !existing.is_null() {
        return js::throw(env, "ERR_SLUICE_SENDER_OPEN", "the sender of this thread is already open");
    }
    let mut tsfn = ptr::null_mut();
    let name = js::string(env, "sluice-sender");
    let front = Arc::new(Front(UnsafeCell::new(State { sender: None, tsfn: ptr::null_mut(), limits, conns: HashMap::new(), next_id: 1, items: 0, outstanding: 0, closed: false, scratch: Vec::new() })));
    let ctx = Arc::into_raw(Arc::clone(&front)) as *mut c_void;
    if napi_create_threadsafe_function(env, cb, ptr::null_mut(), name, 0, 1, ctx, Some(drop_front), ctx, Some(deliver), &mut tsfn) != NAPI_OK {
        drop(Arc::from_raw(ctx as *const Front));
        return js::throw(env, "ERR_INVALID_ARG_TYPE", "onReport must be a function");
    }
    napi_unref_threadsafe_function(env, tsfn);
    let tsfn_addr = tsfn as usize;
    let sink: sender::Sink = Box::new(move |reports: Vec<Report>| {
        let data = Box::into_raw(Box::new(reports)) as *mut c_void;
        // SAFETY: the tsfn outlives the sender thread: it is released only after the thread was
        // joined (env_cleanup). A failed call at teardown leaks the batch, which is harmless.
        unsafe { napi_call_threadsafe_function(tsfn_addr as napi_threadsafe_function, data, TSFN_BLOCKING) };
    });
    let started = Sender::start(sink);
    let st = front.state();
    st.tsfn = tsfn;
    match started {
        Ok(s) => st.sender = Some(s),
        Err(e) => {
            st.closed = true;
            napi_release_threadsafe_function(tsfn, TSFN_RELEASE);
            return js::throw(env, &sys::errno_name(e), "cannot start the sender thread");
        }
    }
    let data = Arc::into_raw(front) as *mut c_void;
    napi_set_instance_data(env, data, drop_front, ptr::null_mut());
    napi_add_env_cleanup_hook(env, env_cleanup, data);
    js::null(env)
}

pub unsafe extern "C" fn sender_attach(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<1>(env, info).and_then(|[fd]| Ok((front(env)?, js::number(env, fd)?)));
    let ((st, sender), fd) = match parsed {
        Ok(p) => p,
        Err(m) => return js::throw(env, "ERR_INVALID_ARG_TYPE", m),
    };
    if !(fd >= 0.0 && fd <= i32::MAX as f64 && fd.fract() == 0.0) { return js::throw(env, "ERR_INVALID_ARG_TYPE", "fd must be a non-negative integer"); }
    if st.conns.len() >= st.limits.conns {
        return js::throw(env, "ERR_SLUICE_SENDER_FULL", &format!("the sender serves {} connections already", st.conns.len()));
    }
    let sock = match sender::dup(fd as i32) {
        Ok(s) => s,
        Err(e) => return js::throw(env, &sys::errno_name(e), "cannot dup the socket fd"),
    };
    let id = st.next_id;
    st.next_id += 1;
    st.conns.insert(id, Acct { bytes: 0, items: 0, failed: false, sock: sock.0 });
    sender.attach(id, sock);
    js::double(env, id as f64)
}

/// Builds the items of one enqueue: buffers copied, file fds dup'd (synchronously, here).
fn read_items(env: napi_env, meta: &[f64], bufs: napi_value) -> Result<(Vec<Item>, u64), (String, String)> {
    let bad = |m: &str| ("ERR_INVALID_ARG_TYPE".to_string(), m.to_string());
    if meta.len() % 3 != 0 { return Err(bad("meta length must be a multiple of 3")); }
    let nbufs = js::array_len(env, bufs).map_err(bad)?;
    let (mut next, mut bytes) = (0u32, 0u64);
    let mut items: Vec<Item> = Vec::with_capacity(meta.len() / 3);
    let int = |x: f64, min: f64| x >= min && x <= 9007199254740991.0 && x.fract() == 0.0;
    for m in meta.chunks_exact(3) {
        if m[0] == -1.0 {
            if next >= nbufs { return Err(bad("meta names more buffers than given")); }
            let (p, len) = js::bytes(env, js::element(env, bufs, next).map_err(bad)?).map_err(bad)?;
            next += 1;
            if len == 0 { continue; }
            // SAFETY: (p, len) are the live bytes of the argument Buffer during this call.
            let src = unsafe { core::slice::from_raw_parts(p, len) };
            bytes += len as u64;
            // Adjacent buffers share one item: fewer iovecs and one allocation per run.
            if let Some(Item::Bytes { data, .. }) = items.last_mut() { data.extend_from_slice(src); } else { items.push(Item::Bytes { data: src.to_vec(), off: 0 }); }
        } else {
            if !int(m[0], 0.0) || m[0] > i32::MAX as f64 || !int(m[1], 0.0) || !int(m[2], 0.0) { return Err(bad("meta holds an invalid fd, position or length")); }
            if m[2] == 0.0 { continue; }
            let fd = sender::dup(m[0] as i32).map_err(|e| (sys::errno_name(e), format!("cannot dup file fd {}", m[0])))?;
            bytes += m[2] as u64;
            items.push(Item::File { fd, pos: m[1] as u64, left: m[2] as u64 });
        }
    }
    if next != nbufs { return Err(bad("buffers not named by meta")); }
    Ok((items, bytes))
}

pub unsafe extern "C" fn sender_enqueue(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<3>(env, info).and_then(|[id, meta, bufs]| {
        Ok((front(env)?, js::number(env, id)? as u64, js::typed::<f64>(env, meta, TYPEDARRAY_FLOAT64, "meta must be a Float64Array")?, bufs))
    });
    let ((st, sender), id, meta, bufs) = match parsed {
        Ok(p) => p,
        Err(m) => return js::throw(env, "ERR_INVALID_ARG_TYPE", m),
    };
    let Some(acct) = st.conns.get(&id) else { return js::throw(env, "ERR_SLUICE_NOT_ATTACHED", &format!("connection {id} is not attached")) };
    if acct.failed { return js::throw(env, "ERR_SLUICE_SEND_FAILED", &format!("connection {id} failed; detach it")); }
    let n = (meta.len() / 3) as u64;
    if acct.items + n > st.limits.conn_items || st.items + n > st.limits.items {
        return js::throw(env, "ERR_SLUICE_SEND_QUEUE_FULL", &format!("send queue full: connection {id} has {} items queued, all connections {} (limits {} / {})", acct.items, st.items, st.limits.conn_items, st.limits.items));
    }
    let (items, bytes) = match read_items(env, meta, bufs) {
        Ok(x) => x,
        Err((code, m)) => return js::throw(env, &code, &m),
    };
    let Some(acct) = st.conns.get_mut(&id) else { return ptr::null_mut() };
    if acct.bytes + bytes > st.limits.conn_bytes {
        return js::throw(env, "ERR_SLUICE_SEND_QUEUE_FULL", &format!("send queue full: connection {id} has {} bytes queued, {bytes} more exceed the limit of {}", acct.bytes, st.limits.conn_bytes));
    }
    let count = items.len() as u64;
    if count == 0 { return ptr::null_mut(); }
    acct.bytes += bytes;
    acct.items += count;
    st.items += count;
    outstanding_add(env, st, count);
    sender.enqueue(id, items);
    ptr::null_mut()
}

/// The most bytes one inline send takes (response_sink.ts holds the same bound). One call stays
/// short (a copy from the page cache and a sendmsg of at most this much), and the file bytes'
/// extra copy (page cache to the scratch buffer, where sendfile would not copy) costs less than
/// the sender thread's wake-up and report: at 100k msgs/s a tailing consumer's answers are ~64 KiB.
const INLINE_MAX_BYTES: usize = 256 * 1024;

/// A chunk of an inline send: an argument Buffer's bytes, or a range of the scratch buffer.
enum Part {
    Js(*const u8, usize),
    Scratch(usize, usize),
}

/// Reads `len` bytes of `fd` at `pos` into `scratch` from `at` (growing it if it is shorter) if
/// they are all in the page cache (preadv2 with RWF_NOWAIT); false when they are not, or the file
/// is shorter.
fn read_cached(fd: i32, pos: u64, len: usize, scratch: &mut Vec<u8>, at: usize) -> bool {
    if scratch.len() < at + len { scratch.resize(at + len, 0); }
    let mut done = 0;
    while done < len {
        let iov = IoVec { base: scratch[at + done..].as_mut_ptr(), len: len - done };
        // SAFETY: iov names live, writable bytes of `scratch` (at least at + len long now); preadv2
        // writes only into them.
        let r = unsafe { sys::preadv2(fd, &iov, 1, (pos + done as u64) as i64, sys::RWF_NOWAIT) };
        if r <= 0 { return false; } // EAGAIN: not cached; 0: the file ends early; else an error the sender reports
        done += r as usize;
    }
    true
}

pub unsafe extern "C" fn sender_try_send(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<3>(env, info).and_then(|[id, meta, bufs]| {
        Ok((front(env)?, js::number(env, id)? as u64, js::typed::<f64>(env, meta, TYPEDARRAY_FLOAT64, "meta must be a Float64Array")?, bufs, js::array_len(env, bufs)?))
    });
    let ((st, _), id, meta, bufs, nbufs) = match parsed {
        Ok(p) => p,
        Err(m) => return js::throw(env, "ERR_INVALID_ARG_TYPE", m),
    };
    let Some(acct) = st.conns.get_mut(&id) else { return js::throw(env, "ERR_SLUICE_NOT_ATTACHED", &format!("connection {id} is not attached")) };
    if acct.failed { return js::throw(env, "ERR_SLUICE_SEND_FAILED", &format!("connection {id} failed; detach it")); }
    // Items still counted are with the sender thread (queued, being written, or reported but not
    // delivered yet): bytes written now would overtake them, and the two threads would share
    // the socket.
    if acct.items > 0 || meta.len() / 3 > sender::GATHER_MAX { return js::double(env, 0.0); }
    let mut parts: Vec<Part> = Vec::with_capacity(meta.len() / 3);
    let scratch = &mut st.scratch;
    let (mut next, mut total, mut used) = (0u32, 0usize, 0usize);
    for m in meta.chunks_exact(3) {
        if m[0] == -1.0 {
            if next >= nbufs { return js::throw(env, "ERR_INVALID_ARG_TYPE", "meta names more buffers than given"); }
            let (p, len) = match js::element(env, bufs, next).and_then(|b| js::bytes(env, b)) {
                Ok(x) => x,
                Err(m) => return js::throw(env, "ERR_INVALID_ARG_TYPE", m),
            };
            next += 1;
            total += len;
            parts.push(Part::Js(p, len));
        } else {
            let (fd, pos, len) = (m[0], m[1], m[2]);
            if !(fd >= 0.0 && fd <= i32::MAX as f64 && fd.fract() == 0.0 && pos >= 0.0 && pos.fract() == 0.0 && len >= 0.0 && len.fract() == 0.0) {
                return js::throw(env, "ERR_INVALID_ARG_TYPE", "meta holds an invalid fd, position or length");
            }
            total = total.saturating_add(len as usize);
            if total > INLINE_MAX_BYTES { return js::double(env, 0.0); }
            if !read_cached(fd as i32, pos as u64, len as usize, scratch, used) { return js::double(env, 0.0); }
            parts.push(Part::Scratch(used, len as usize));
            used += len as usize;
        }
        if total > INLINE_MAX_BYTES { return js::double(env, 0.0); }
    }
    if next != nbufs { return js::throw(env, "ERR_INVALID_ARG_TYPE", "buffers not named by meta"); }
    // The iovecs are built only now: `scratch` may have moved while it grew.
    let mut iov = [IoVec { base: ptr::null(), len: 0 }; sender::GATHER_MAX];
    for (slot, part) in iov.iter_mut().zip(&parts) {
        *slot = match *part {
            Part::Js(base, len) => IoVec { base, len },
            Part::Scratch(at, len) => IoVec { base: scratch[at..].as_ptr(), len },
        };
    }
    // SAFETY: the iovecs name the argument Buffers' bytes and `scratch`, alive for this call;
    // acct.sock is the attached connection's dup (open while its entry exists) and the sender
    // thread holds no item of it, so it does not write that socket now.
    match sender::send_now(acct.sock, &iov[..parts.len()]) {
        Ok(bytes) => js::double(env, bytes as f64),
        Err(e) => {
            acct.failed = true;
            js::throw(env, &sys::errno_name(e), &format!("inline send on connection {id} failed"))
        }
    }
}

pub unsafe extern "C" fn sender_detach(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<1>(env, info).and_then(|[id]| Ok((front(env)?, js::number(env, id)? as u64)));
    let ((st, sender), id) = match parsed {
        Ok(p) => p,
        Err(m) => return js::throw(env, "ERR_INVALID_ARG_TYPE", m),
    };
    if st.conns.remove(&id).is_none() { return js::throw(env, "ERR_SLUICE_NOT_ATTACHED", &format!("connection {id} is not attached")); }
    outstanding_add(env, st, 1);
    sender.detach(id);
    ptr::null_mut()
}
