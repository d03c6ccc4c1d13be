//! sluice_native: the N-API module. Exports
//!   openRing(entries, maxInflightBytes) -> handle (an External over one ring and its poll handle)
//!   commit(handle, meta: Float64Array [fd, position, chunkCount]*, chunks: Buffer[],
//!          syncFds: Int32Array, callback(errno: string|null, message: string|null),
//!          written?: () => void, writeback?: Float64Array [fd, offset, length]*) -> boolean
//!          (written, when given, runs once every write landed, before the callback, only if no
//!          write failed; the engine's Report::Written. writeback ranges start going to disk
//!          after the fd's writes and syncs; advisory, they never fail the commit)
//!   close(handle) (blocks until in-flight commits finished; their callbacks run before it returns),
//!   crc32c(buf) -> u32, crc32cHardware: boolean, reportsWritten: true (commit
//!   takes `written`; absent from older builds), startsWriteback: true (commit takes `writeback`),
//!   senderOpen / senderAttach / senderEnqueue / senderTrySend / senderDetach: the socket sender
//!   (sender_napi.rs),
//!   raiseNofile() -> [soft, hard]: RLIMIT_NOFILE's soft limit raised to the hard one (-1 = unlimited),
//!   dupFd(fd) -> a new close-on-exec descriptor for the same open file (throws with the errno name).
//! Every call runs on the JS thread that loaded the module; a ring's completions come back to that
//! thread through its event loop, which watches the ring's eventfd (a uv poll handle); the socket
//! sender's through a threadsafe function. Each load (main thread or worker) gets its own rings:
//! nothing here lives in a Rust static except the CRC tables, which are immutable.

mod crc32c;
mod engine;
mod js;
mod napi;
mod sender;
mod sender_napi;
mod sys;
mod uring;

use core::cell::Cell;
use core::ffi::{c_int, c_void};
use core::ptr;
use engine::{Engine, Report, WriteSpec, WritebackSpec};
use napi::*;
use std::rc::Rc;
use sys::IoVec;

/// One commit's JS callbacks; the engine carries a raw pointer to them as the commit's token,
/// from its submission to the delivery of its Done, which frees them. Used only on the JS thread.
struct Callbacks {
    done: napi_ref,
    written: Option<napi_ref>,
}

impl Callbacks {
    /// Drops the references (the commit is finished or was never submitted).
    unsafe fn release(self: Box<Self>, env: napi_env) {
        napi_delete_reference(env, self.done);
        if let Some(w) = self.written { napi_delete_reference(env, w); }
    }
}

/// Calls the function behind `r` with `argv` and `undefined` as `this`. What it throws goes to
/// the thread's uncaught-exception handling, as a throw from any other event-loop callback would.
unsafe fn call_ref(env: napi_env, r: napi_ref, argv: &[napi_value]) {
    let mut f = ptr::null_mut();
    napi_get_reference_value(env, r, &mut f);
    let mut undefined = ptr::null_mut();
    napi_get_undefined(env, &mut undefined);
    if napi_call_function(env, undefined, f, argv.len(), argv.as_ptr(), ptr::null_mut()) == NAPI_OK { return; }
    let mut pending = false;
    napi_is_exception_pending(env, &mut pending);
    if pending {
        let mut err = ptr::null_mut();
        napi_get_and_clear_last_exception(env, &mut err);
        napi_fatal_exception(env, err);
    }
}

/// One ring, and the uv poll handle through which its completions reach the JS thread that opened
/// it. Two owners share it (Rc): the External the JS holds, released by its finalizer, and the
/// poll handle, released once libuv closed it; whichever lets go last frees it. Closing (close(),
/// the finalizer or the env's teardown, whichever comes first) shuts the engine down and closes
/// the handle; the env's teardown waits for that close (an async cleanup hook), since a worker's
/// event loop may not end with a handle of ours open. Used only on the JS thread.
struct Ring {
    env: napi_env,
    engine: Engine,
    /// The uv_poll_t watching the engine's eventfd: uv_handle_size(UV_POLL) bytes, as libuv's
    /// layout is not ours to declare. Its `data` field holds the poll handle's Rc.
    poll: Box<[u64]>,
    /// The async context completions are delivered in (async_hooks, microtasks after them).
    async_ctx: napi_async_context,
    /// Commits whose Done has not been delivered: while > 0 the poll handle keeps the loop alive;
    /// an idle ring does not.
    js_inflight: Cell<u32>,
    closing: Cell<bool>,
    teardown_hook: Cell<napi_async_cleanup_hook_handle>,
}

impl Ring {
    fn poll_handle(&self) -> uv_handle {
        self.poll.as_ptr() as uv_handle
    }

    /// Stops the ring once its in-flight commits finished, then closes the poll handle. Their
    /// reports are delivered when `can_call_js` (JS called close()); at the finalizer or the
    /// env's teardown no one is left to call. Idempotent.
    unsafe fn begin_close(&self, can_call_js: bool) {
        if self.closing.replace(true) { return; }
        let mut reports = Vec::new();
        self.engine.shutdown(&mut reports);
        if can_call_js {
            for r in reports { self.deliver(r); }
        }
        uv_close(self.poll_handle(), on_poll_closed);
    }

    /// Runs the JS side of one report: the commit's writes landed, or it finished.
    unsafe fn deliver(&self, report: Report) {
        let env = self.env;
        let done = match report {
            Report::Written(token) => {
                // SAFETY: the token's Callbacks live until this commit's Done, which the engine
                // reports after this one.
                let callbacks = &*(token as *const Callbacks);
                if let Some(w) = callbacks.written { call_ref(env, w, &[]); }
                return;
            }
            Report::Done(done) => done,
        };
        let left = self.js_inflight.get() - 1;
        self.js_inflight.set(left);
        if left == 0 { uv_unref(self.poll_handle()); }
        // SAFETY: the token is the Box<Callbacks> commit() leaked; this Done is its last use.
        let callbacks = Box::from_raw(done.token as *mut Callbacks);
        let argv = match &done.error {
            None => [js::null(env), js::null(env)],
            Some((errno, what)) => {
                let name = sys::errno_name(*errno);
                [js::string(env, &name), js::string(env, &format!("{what}: {name}"))]
            }
        };
        call_ref(env, callbacks.done, &argv);
        callbacks.release(env);
    }
}

/// The Ring a uv handle of ours belongs to (its `data` field).
unsafe fn ring_of_handle<'a>(handle: uv_handle) -> &'a Ring {
    // SAFETY: open_ring stored the poll handle's Rc<Ring> in `data`; it lives until on_poll_closed.
    &*(*(handle as *const *const Ring))
}

/// The eventfd is readable: completions wait. Delivers each as a libuv callback of this thread's
/// loop, in a callback scope of its own, so the promises it settles run their reactions (and what
/// those start) before the next report is delivered, as through a threadsafe function.
unsafe extern "C" fn on_poll(handle: uv_handle, _status: c_int, _events: c_int) {
    let ring = ring_of_handle(handle);
    let mut reports = Vec::new();
    // A poll error (not expected on an eventfd) is no reason to stop: the CQ says what finished.
    ring.engine.complete(&mut reports);
    let env = ring.env;
    for r in reports {
        let mut handles = ptr::null_mut();
        napi_open_handle_scope(env, &mut handles);
        let mut scope = ptr::null_mut();
        let scoped = napi_open_callback_scope(env, ptr::null_mut(), ring.async_ctx, &mut scope) == NAPI_OK;
        ring.deliver(r);
        if scoped { napi_close_callback_scope(env, scope); }
        napi_close_handle_scope(env, handles);
    }
}

unsafe extern "C" fn on_poll_closed(handle: uv_handle) {
    // SAFETY: the poll handle's Rc, stored in `data` by open_ring; libuv is done with the handle.
    let ring = Rc::from_raw(*(handle as *const *const Ring));
    // Here, not in begin_close, which may run inside a delivery still in the context's scope.
    napi_async_destroy(ring.env, ring.async_ctx);
    let hook = ring.teardown_hook.replace(ptr::null_mut());
    if !hook.is_null() { napi_remove_async_cleanup_hook(hook); }
    drop(ring);
}

unsafe extern "C" fn env_teardown(_hook: napi_async_cleanup_hook_handle, arg: *mut c_void) {
    // SAFETY: arg is the Ring, alive while this hook is registered (on_poll_closed removes it
    // before releasing the poll handle's Rc, and the External's Rc alone cannot free the Ring).
    (*(arg as *const Ring)).begin_close(false);
}

unsafe extern "C" fn ring_finalize(_env: napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: data is the External's Rc<Ring>, created in open_ring; this is its release. Nothing
    // is in flight: a commit's callbacks keep the JS that holds this handle alive.
    let ring = Rc::from_raw(data as *const Ring);
    ring.begin_close(false);
}

fn ring_of<'a>(env: napi_env, v: napi_value) -> js::JsResult<&'a Ring> {
    let mut data = ptr::null_mut();
    // SAFETY: valid out-param; a non-External fails with a status.
    if unsafe { napi_get_value_external(env, v, &mut data) } != NAPI_OK || data.is_null() {
        return Err("expected a ring handle");
    }
    // SAFETY: only open_ring creates Externals in this module, each over an Rc<Ring>, and the
    // handle value keeps it alive for the duration of the call.
    Ok(unsafe { &*(data as *const Ring) })
}

unsafe extern "C" fn open_ring(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<2>(env, info).and_then(|[e, b]| Ok((js::number(env, e)?, js::number(env, b)?)));
    let Ok((entries, max_bytes)) = parsed else { return js::throw(env, "ERR_INVALID_ARG_TYPE", "openRing(entries, maxInflightBytes) takes two numbers") };
    if !(entries >= 1.0 && entries <= 32768.0 && max_bytes >= 1.0) {
        return js::throw(env, "ERR_OUT_OF_RANGE", "openRing: entries must be 1..32768 and maxInflightBytes positive");
    }
    let engine = match Engine::start(entries as u32, max_bytes as u64) {
        Ok(e) => e,
        Err(errno) => {
            let name = sys::errno_name(errno);
            return js::throw(env, &name, &format!("io_uring_setup failed: {name}"));
        }
    };
    let mut event_loop = ptr::null_mut();
    let mut async_ctx = ptr::null_mut();
    if napi_get_uv_event_loop(env, &mut event_loop) != NAPI_OK || napi_async_init(env, ptr::null_mut(), js::string(env, "sluice-uring"), &mut async_ctx) != NAPI_OK {
        return js::throw(env, "ERR_SLUICE_NAPI", "openRing: no event loop or async context for completions");
    }
    let words = uv_handle_size(UV_POLL).div_ceil(8);
    let ring = Rc::new(Ring { env, engine, poll: vec![0u64; words].into_boxed_slice(), async_ctx, js_inflight: Cell::new(0), closing: Cell::new(false), teardown_hook: Cell::new(ptr::null_mut()) });
    let handle = ring.poll_handle();
    let rc = uv_poll_init(event_loop, handle, ring.engine.event_fd());
    if rc != 0 {
        napi_async_destroy(env, async_ctx);
        return js::throw(env, "ERR_SLUICE_NAPI", &format!("openRing: uv_poll_init failed ({rc})"));
    }
    // From here the handle is the loop's: it is let go only through uv_close (begin_close).
    *(handle as *mut *const Ring) = Rc::into_raw(Rc::clone(&ring));
    let mut hook = ptr::null_mut();
    napi_add_async_cleanup_hook(env, env_teardown, Rc::as_ptr(&ring) as *mut c_void, &mut hook);
    ring.teardown_hook.set(hook);
    let rc = uv_poll_start(handle, UV_READABLE, on_poll);
    if rc != 0 {
        ring.begin_close(false);
        return js::throw(env, "ERR_SLUICE_NAPI", &format!("openRing: uv_poll_start failed ({rc})"));
    }
    uv_unref(handle);
    let mut external = ptr::null_mut();
    napi_create_external(env, Rc::into_raw(ring) as *mut c_void, ring_finalize, ptr::null_mut(), &mut external);
    external
}

/// Number.MAX_SAFE_INTEGER: the largest file position a JS number carries exactly.
const MAX_SAFE_INTEGER: f64 = 9007199254740991.0;

/// Whether `x` is a whole number in [0, max].
fn whole(x: f64, max: f64) -> bool {
    x >= 0.0 && x <= max && x.fract() == 0.0
}

/// Reads the commit's ops; the Buffers stay referenced by the JS caller until the callback.
fn read_writes(env: napi_env, meta: napi_value, chunks: napi_value) -> js::JsResult<Vec<WriteSpec>> {
    let meta: &[f64] = js::typed(env, meta, TYPEDARRAY_FLOAT64, "meta must be a Float64Array")?;
    if meta.len() % 3 != 0 { return Err("meta length must be a multiple of 3"); }
    let total = js::array_len(env, chunks)?;
    let mut next = 0u32;
    let mut writes = Vec::with_capacity(meta.len() / 3);
    for m in meta.chunks_exact(3) {
        let (fd, position, count) = (m[0], m[1], m[2]);
        if !whole(fd, i32::MAX as f64) || !whole(position, MAX_SAFE_INTEGER) || !whole(count, total as f64) {
            return Err("meta holds an invalid fd, position or chunk count");
        }
        if next + count as u32 > total { return Err("meta names more chunks than given"); }
        let mut iov = Vec::with_capacity(count as usize);
        for i in next..next + count as u32 {
            let (base, len) = js::bytes(env, js::element(env, chunks, i)?)?;
            iov.push(IoVec { base, len });
        }
        next += count as u32;
        writes.push(WriteSpec { fd: fd as i32, position: position as u64, iov });
    }
    if next != total { return Err("chunks not named by meta"); }
    Ok(writes)
}

/// The commit's writeback ranges: none when the argument is left out.
fn read_writeback(env: napi_env, v: napi_value) -> js::JsResult<Vec<WritebackSpec>> {
    if js::is_undefined(env, v)? { return Ok(Vec::new()); }
    let spec: &[f64] = js::typed(env, v, TYPEDARRAY_FLOAT64, "writeback must be a Float64Array or undefined")?;
    if spec.len() % 3 != 0 { return Err("writeback length must be a multiple of 3"); }
    spec.chunks_exact(3)
        .map(|w| {
            if !whole(w[0], i32::MAX as f64) || !whole(w[1], MAX_SAFE_INTEGER) || !whole(w[2], u32::MAX as f64) {
                return Err("writeback holds an invalid fd, offset or length");
            }
            Ok(WritebackSpec { fd: w[0] as i32, offset: w[1] as u64, len: w[2] as u32 })
        })
        .collect()
}

unsafe extern "C" fn commit(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<7>(env, info).and_then(|[h, meta, chunks, sync, cb, written, writeback]| {
        let ring = ring_of(env, h)?;
        let writes = read_writes(env, meta, chunks)?;
        let sync: &[i32] = js::typed(env, sync, TYPEDARRAY_INT32, "syncFds must be an Int32Array")?;
        let written = js::optional_function(env, written, "written must be a function or undefined")?;
        let writeback = read_writeback(env, writeback)?;
        Ok((ring, writes, sync, cb, written, writeback))
    });
    let (ring, writes, sync, cb, written, writeback) = match parsed {
        Ok(p) => p,
        Err(m) => return js::throw(env, "ERR_INVALID_ARG_TYPE", m),
    };
    let mut done_ref = ptr::null_mut();
    if napi_create_reference(env, cb, 1, &mut done_ref) != NAPI_OK {
        return js::throw(env, "ERR_INVALID_ARG_TYPE", "callback must be a function");
    }
    let written = written.map(|w| {
        let mut r = ptr::null_mut();
        // A function is an object: the reference cannot be refused.
        napi_create_reference(env, w, 1, &mut r);
        r
    });
    let callbacks = Box::new(Callbacks { done: done_ref, written });
    let report_written = callbacks.written.is_some();
    let token = Box::into_raw(callbacks);
    let queued = ring.engine.commit(writes, sync, &writeback, token as usize, report_written);
    let mut out = ptr::null_mut();
    match queued {
        Ok(true) => {
            let inflight = ring.js_inflight.get();
            if inflight == 0 { uv_ref(ring.poll_handle()); }
            ring.js_inflight.set(inflight + 1);
            napi_get_boolean(env, true, &mut out);
        }
        Ok(false) => {
            Box::from_raw(token).release(env);
            napi_get_boolean(env, false, &mut out);
        }
        Err(refused) => {
            Box::from_raw(token).release(env);
            return js::throw(env, refused.code, &refused.message);
        }
    }
    out
}

unsafe extern "C" fn close(env: napi_env, info: napi_callback_info) -> napi_value {
    let ring = match js::args::<1>(env, info).and_then(|[h]| ring_of(env, h)) {
        Ok(r) => r,
        Err(m) => return js::throw(env, "ERR_INVALID_ARG_TYPE", m),
    };
    ring.begin_close(true);
    ptr::null_mut()
}

unsafe extern "C" fn crc32c(env: napi_env, info: napi_callback_info) -> napi_value {
    match js::args::<1>(env, info).and_then(|[b]| js::bytes(env, b)) {
        // SAFETY: (ptr, len) describe the argument's live bytes for the duration of the call.
        Ok((p, len)) => js::uint32(env, crc32c::crc32c(core::slice::from_raw_parts(p, len))),
        Err(m) => js::throw(env, "ERR_INVALID_ARG_TYPE", m),
    }
}

/// Node cannot call setrlimit: the broker asks here at start. A refused raise (a hard limit above
/// the kernel's nr_open) leaves the soft limit as it was, and the answer says so.
unsafe extern "C" fn raise_nofile(env: napi_env, _info: napi_callback_info) -> napi_value {
    let mut lim = sys::RLimit::default();
    if sys::getrlimit(sys::RLIMIT_NOFILE, &mut lim) != 0 {
        return js::throw(env, "ERR_RLIMIT", "getrlimit(RLIMIT_NOFILE) failed");
    }
    if lim.cur < lim.max {
        let raised = sys::RLimit { cur: lim.max, max: lim.max };
        if sys::setrlimit(sys::RLIMIT_NOFILE, &raised) == 0 {
            lim = raised;
        }
    }
    let as_js = |v: u64| if v == sys::RLIM_INFINITY { -1.0 } else { v as f64 };
    let mut arr = ptr::null_mut();
    if napi_create_array_with_length(env, 2, &mut arr) != NAPI_OK
        || napi_set_element(env, arr, 0, js::double(env, as_js(lim.cur))) != NAPI_OK
        || napi_set_element(env, arr, 1, js::double(env, as_js(lim.max))) != NAPI_OK
    {
        return js::throw(env, "ERR_NAPI", "raiseNofile: could not build the result");
    }
    arr
}

/// Node has no dup(): main hands an accepted socket to a shard worker as a duplicate it then owns
/// (new net.Socket({ fd })), while destroying its own handle closes only the original.
unsafe extern "C" fn dup_fd(env: napi_env, info: napi_callback_info) -> napi_value {
    let fd = match js::args::<1>(env, info).and_then(|[fd]| js::number(env, fd)) {
        Ok(fd) if fd >= 0.0 && fd <= i32::MAX as f64 && fd.fract() == 0.0 => fd as i32,
        _ => return js::throw(env, "ERR_INVALID_ARG_TYPE", "dupFd(fd) takes a non-negative integer"),
    };
    // F_DUPFD_CLOEXEC only creates a new descriptor; an invalid fd fails with EBADF. The new one
    // is the caller's to close (not an Fd, which would close it on drop).
    let n = sys::fcntl(fd, sys::F_DUPFD_CLOEXEC, 0);
    if n < 0 {
        let name = sys::errno_name(sys::errno());
        return js::throw(env, &name, &format!("dupFd({fd}) failed: {name}"));
    }
    js::double(env, n as f64)
}

#[no_mangle]
pub unsafe extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
    js::export(env, exports, "openRing", open_ring);
    js::export(env, exports, "commit", commit);
    js::export(env, exports, "close", close);
    js::export(env, exports, "crc32c", crc32c);
    js::export(env, exports, "senderOpen", sender_napi::sender_open);
    js::export(env, exports, "senderAttach", sender_napi::sender_attach);
    js::export(env, exports, "senderEnqueue", sender_napi::sender_enqueue);
    js::export(env, exports, "senderTrySend", sender_napi::sender_try_send);
    js::export(env, exports, "senderDetach", sender_napi::sender_detach);
    js::export(env, exports, "raiseNofile", raise_nofile);
    js::export(env, exports, "dupFd", dup_fd);
    let mut hw = ptr::null_mut();
    napi_get_boolean(env, crc32c::has_hardware(), &mut hw);
    js::set(env, exports, "crc32cHardware", hw);
    let mut reports_written = ptr::null_mut();
    napi_get_boolean(env, true, &mut reports_written);
    js::set(env, exports, "reportsWritten", reports_written);
    let mut starts_writeback = ptr::null_mut();
    napi_get_boolean(env, true, &mut starts_writeback);
    js::set(env, exports, "startsWriteback", starts_writeback);
    exports
}

#[no_mangle]
pub extern "C" fn node_api_module_get_api_version_v1() -> i32 {
    8
}
