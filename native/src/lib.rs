//! sluice_native: the N-API module. Exports
//!   openRing(entries, maxInflightBytes) -> handle (an External owning one ring + its thread)
//!   commit(handle, meta: Float64Array [fd, position, chunkCount]*, chunks: Buffer[],
//!          syncFds: Int32Array, callback(errno: string|null, message: string|null),
//!          written?: () => void, writeback?: Float64Array [fd, offset, length]*) -> boolean
//!          (written, when given, runs once every write landed, before the callback, only if no
//!          write failed; the engine's Report::Written. writeback ranges start going to disk
//!          after the fd's writes and syncs; advisory, they never fail the commit)
//!   close(handle), crc32c(buf) -> u32, crc32cHardware: boolean, reportsWritten: true (commit
//!   takes `written`; absent from older builds), startsWriteback: true (commit takes `writeback`),
//!   senderOpen / senderAttach / senderEnqueue / senderTrySend / senderDetach: the socket sender
//!   (sender_napi.rs),
//!   raiseNofile() -> [soft, hard]: RLIMIT_NOFILE's soft limit raised to the hard one (-1 = unlimited),
//!   dupFd(fd) -> a new close-on-exec descriptor for the same open file (throws with the errno name).
//! Every call runs on the JS thread that loaded the module; completions come back to that thread
//! through a threadsafe function. Each load (main thread or worker) gets its own rings: nothing
//! here lives in a Rust static except the CRC tables, which are immutable.

mod crc32c;
mod engine;
mod js;
mod napi;
mod sender;
mod sender_napi;
mod sys;
mod uring;

use core::ffi::c_void;
use core::ptr;
use engine::{Engine, Report, WriteSpec, WritebackSpec};
use napi::*;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use sys::IoVec;

/// What the completion thread and the JS-side dispatch share.
struct Shared {
    tsfn: AtomicTsfn,
    /// Commits whose JS callback has not run yet; only touched on the JS thread (atomic only so
    /// Shared is Sync).
    js_inflight: AtomicU32,
    /// Set by the tsfn's finalizer: after it the tsfn must not be used.
    tsfn_gone: AtomicBool,
}

struct AtomicTsfn(core::sync::atomic::AtomicPtr<c_void>);

impl AtomicTsfn {
    fn get(&self) -> napi_threadsafe_function {
        self.0.load(Ordering::Acquire)
    }
}

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

/// Calls the function behind `r` with `argv` and `undefined` as `this`.
unsafe fn call_ref(env: napi_env, r: napi_ref, argv: &[napi_value]) {
    let mut f = ptr::null_mut();
    napi_get_reference_value(env, r, &mut f);
    let mut undefined = ptr::null_mut();
    napi_get_undefined(env, &mut undefined);
    napi_call_function(env, undefined, f, argv.len(), argv.as_ptr(), ptr::null_mut());
}

/// Owned by the External handle the JS holds; used only on the JS thread.
struct Ring {
    env: napi_env,
    engine: Arc<Engine>,
    shared: Arc<Shared>,
    closed: bool,
    hook_registered: bool,
}

impl Ring {
    /// Stops the ring after in-flight commits finished; their callbacks are still delivered
    /// (the tsfn is released, not aborted). Idempotent.
    fn shutdown(&mut self) {
        if self.closed { return; }
        self.closed = true;
        self.engine.shutdown();
        if !self.shared.tsfn_gone.load(Ordering::Acquire) {
            // SAFETY: the tsfn is alive (not finalized) and the completion thread, its only other
            // user, has been joined by engine.shutdown().
            unsafe { napi_release_threadsafe_function(self.shared.tsfn.get(), TSFN_RELEASE) };
        }
    }
}

unsafe extern "C" fn tsfn_finalize(_env: napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: data is the Arc<Shared> leaked for the tsfn in open_ring; this is its only release.
    let shared = Arc::from_raw(data as *const Shared);
    shared.tsfn_gone.store(true, Ordering::Release);
}

/// Runs on the JS thread for each report of a commit: its writes landed, or it finished.
unsafe extern "C" fn deliver(env: napi_env, _f: napi_value, context: *mut c_void, data: *mut c_void) {
    // SAFETY: data is the Box<Report> the sink leaked; context the Arc<Shared> the tsfn owns.
    let report = Box::from_raw(data as *mut Report);
    if env.is_null() { return; } // env tearing down: nobody is left to call
    let done = match *report {
        Report::Written(token) => {
            // SAFETY: the token's Callbacks live until this commit's Done, which the engine
            // reports after this one, through the same queue.
            let callbacks = &*(token as *const Callbacks);
            if let Some(w) = callbacks.written { call_ref(env, w, &[]); }
            return;
        }
        Report::Done(done) => done,
    };
    let shared = &*(context as *const Shared);
    if shared.js_inflight.fetch_sub(1, Ordering::Relaxed) == 1 {
        napi_unref_threadsafe_function(env, shared.tsfn.get());
    }
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

unsafe extern "C" fn env_cleanup(arg: *mut c_void) {
    // SAFETY: arg is the Box<Ring> of a live External: the finalizer removes this hook before
    // freeing it, and the flag below stops the finalizer from removing it again.
    let ring = &mut *(arg as *mut Ring);
    ring.hook_registered = false;
    ring.shutdown();
}

unsafe extern "C" fn ring_finalize(env: napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: data is the Box<Ring> created in open_ring; the External is gone, so this is the
    // last use of it.
    let mut ring = Box::from_raw(data as *mut Ring);
    ring.shutdown();
    if ring.hook_registered {
        napi_remove_env_cleanup_hook(env, env_cleanup, data);
    }
}

fn ring_of<'a>(env: napi_env, v: napi_value) -> js::JsResult<&'a mut Ring> {
    let mut data = ptr::null_mut();
    // SAFETY: valid out-param; a non-External fails with a status.
    if unsafe { napi_get_value_external(env, v, &mut data) } != NAPI_OK || data.is_null() {
        return Err("expected a ring handle");
    }
    // SAFETY: only open_ring creates Externals in this module, each over a Box<Ring>, and the
    // handle value keeps it alive for the duration of the call.
    Ok(unsafe { &mut *(data as *mut Ring) })
}

unsafe fn create_tsfn(env: napi_env, shared: &Arc<Shared>) -> Result<napi_threadsafe_function, &'static str> {
    let name = js::string(env, "sluice-uring");
    let ctx = Arc::into_raw(Arc::clone(shared)) as *mut c_void;
    let mut tsfn = ptr::null_mut();
    let st = napi_create_threadsafe_function(env, ptr::null_mut(), ptr::null_mut(), name, 0, 1, ctx, Some(tsfn_finalize), ctx, Some(deliver), &mut tsfn);
    if st != NAPI_OK {
        drop(Arc::from_raw(ctx as *const Shared));
        return Err("cannot create threadsafe function");
    }
    // Idle rings must not keep the thread's event loop alive; commits ref it while in flight.
    napi_unref_threadsafe_function(env, tsfn);
    Ok(tsfn)
}

unsafe extern "C" fn open_ring(env: napi_env, info: napi_callback_info) -> napi_value {
    let parsed = js::args::<2>(env, info).and_then(|[e, b]| Ok((js::number(env, e)?, js::number(env, b)?)));
    let Ok((entries, max_bytes)) = parsed else { return js::throw(env, "ERR_INVALID_ARG_TYPE", "openRing(entries, maxInflightBytes) takes two numbers") };
    if !(entries >= 1.0 && entries <= 32768.0 && max_bytes >= 1.0) {
        return js::throw(env, "ERR_OUT_OF_RANGE", "openRing: entries must be 1..32768 and maxInflightBytes positive");
    }
    let shared = Arc::new(Shared { tsfn: AtomicTsfn(Default::default()), js_inflight: AtomicU32::new(0), tsfn_gone: AtomicBool::new(false) });
    let tsfn = match create_tsfn(env, &shared) {
        Ok(t) => t,
        Err(m) => return js::throw(env, "ERR_SLUICE_NAPI", m),
    };
    shared.tsfn.0.store(tsfn, Ordering::Release);
    let tsfn_addr = tsfn as usize;
    let sink = Box::new(move |report: Report| {
        let data = Box::into_raw(Box::new(report)) as *mut c_void;
        // SAFETY: the tsfn outlives the completion thread: it is released only after the thread
        // was joined (Ring::shutdown). If the env is closing the call fails and the Box leaks,
        // which is harmless at teardown.
        unsafe { napi_call_threadsafe_function(tsfn_addr as napi_threadsafe_function, data, TSFN_BLOCKING) };
    });
    let engine = match Engine::start(entries as u32, max_bytes as u64, sink) {
        Ok(e) => e,
        Err(errno) => {
            napi_release_threadsafe_function(tsfn, TSFN_RELEASE);
            let name = sys::errno_name(errno);
            return js::throw(env, &name, &format!("io_uring_setup failed: {name}"));
        }
    };
    let ring = Box::into_raw(Box::new(Ring { env, engine, shared, closed: false, hook_registered: true }));
    // Registered after the tsfn, so at env teardown it runs before the tsfn's own cleanup
    // (hooks run in reverse order) and the completion thread stops while the tsfn still exists.
    napi_add_env_cleanup_hook(env, env_cleanup, ring as *mut c_void);
    let mut handle = ptr::null_mut();
    napi_create_external(env, ring as *mut c_void, ring_finalize, ptr::null_mut(), &mut handle);
    handle
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
            if ring.shared.js_inflight.fetch_add(1, Ordering::Relaxed) == 0 {
                napi_ref_threadsafe_function(env, ring.shared.tsfn.get());
            }
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
    ring.shutdown();
    if ring.hook_registered {
        ring.hook_registered = false;
        napi_remove_env_cleanup_hook(ring.env, env_cleanup, ring as *mut Ring as *mut c_void);
    }
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
