//! Small safe-ish wrappers over raw N-API calls used by the bindings: argument fetching, value
//! conversion and throwing. All of them run on the JS thread of `env` (N-API's own rule).

use crate::napi::*;
use core::ffi::c_void;
use core::ptr;
use std::ffi::CString;

/// Throws a JS Error with `code`; returns the undefined placeholder a binding returns after it.
pub fn throw(env: napi_env, code: &str, msg: &str) -> napi_value {
    let code = CString::new(code).unwrap_or_default();
    let msg = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    // SAFETY: both strings are NUL-terminated and live for the call.
    unsafe { napi_throw_error(env, code.as_ptr(), msg.as_ptr()) };
    ptr::null_mut()
}

pub type JsResult<T> = Result<T, &'static str>;

/// The first N arguments of the current call (missing ones are `undefined`).
pub fn args<const N: usize>(env: napi_env, info: napi_callback_info) -> JsResult<[napi_value; N]> {
    let mut argv = [ptr::null_mut(); N];
    let mut argc = N;
    // SAFETY: argv has room for argc values.
    let st = unsafe { napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
    if st == NAPI_OK { Ok(argv) } else { Err("cannot read arguments") }
}

/// None for `undefined`, the function itself for a function; anything else is an error.
pub fn optional_function(env: napi_env, v: napi_value, what: &'static str) -> JsResult<Option<napi_value>> {
    let mut kind = 0;
    // SAFETY: kind is a valid out-param.
    if unsafe { napi_typeof(env, v, &mut kind) } != NAPI_OK { return Err(what); }
    match kind {
        VALUETYPE_UNDEFINED => Ok(None),
        VALUETYPE_FUNCTION => Ok(Some(v)),
        _ => Err(what),
    }
}

pub fn number(env: napi_env, v: napi_value) -> JsResult<f64> {
    let mut out = 0.0;
    // SAFETY: out is a valid f64 slot; a non-number fails with a status.
    if unsafe { napi_get_value_double(env, v, &mut out) } == NAPI_OK { Ok(out) } else { Err("expected a number") }
}

/// (pointer, length) of a Buffer or any ArrayBufferView.
pub fn bytes(env: napi_env, v: napi_value) -> JsResult<(*const u8, usize)> {
    let mut data: *mut c_void = ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: out-params are valid; N-API checks the value's type.
    if unsafe { napi_get_buffer_info(env, v, &mut data, &mut len) } != NAPI_OK {
        return Err("expected a Buffer");
    }
    Ok((if len == 0 { ptr::NonNull::<u8>::dangling().as_ptr() } else { data as *const u8 }, len))
}

/// The contents of a typed array of the given kind, as a slice valid while the JS value lives
/// (callers use it within the current call only).
pub fn typed<'a, T>(env: napi_env, v: napi_value, kind: core::ffi::c_int, what: &'static str) -> JsResult<&'a [T]> {
    let (mut k, mut len, mut data, mut off) = (0, 0usize, ptr::null_mut::<c_void>(), 0usize);
    // SAFETY: out-params are valid; a non-typed-array fails with a status.
    let st = unsafe { napi_get_typedarray_info(env, v, &mut k, &mut len, &mut data, ptr::null_mut(), &mut off) };
    if st != NAPI_OK || k != kind { return Err(what); }
    if len == 0 { return Ok(&[]); }
    // SAFETY: N-API reports `len` elements of T at `data`, kept alive by the argument.
    Ok(unsafe { core::slice::from_raw_parts(data as *const T, len) })
}

/// Whether `v` is `undefined` (an optional argument left out).
pub fn is_undefined(env: napi_env, v: napi_value) -> JsResult<bool> {
    let mut kind = 0;
    // SAFETY: kind is a valid out-param.
    if unsafe { napi_typeof(env, v, &mut kind) } != NAPI_OK { return Err("cannot read an argument's type"); }
    Ok(kind == VALUETYPE_UNDEFINED)
}

pub fn array_len(env: napi_env, v: napi_value) -> JsResult<u32> {
    let mut n = 0;
    // SAFETY: n is a valid out-param.
    if unsafe { napi_get_array_length(env, v, &mut n) } == NAPI_OK { Ok(n) } else { Err("expected an array") }
}

pub fn element(env: napi_env, arr: napi_value, i: u32) -> JsResult<napi_value> {
    let mut out = ptr::null_mut();
    // SAFETY: out is a valid out-param.
    if unsafe { napi_get_element(env, arr, i, &mut out) } == NAPI_OK { Ok(out) } else { Err("cannot read array element") }
}

pub fn string(env: napi_env, s: &str) -> napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: s points at s.len() valid UTF-8 bytes.
    unsafe { napi_create_string_utf8(env, s.as_ptr() as *const _, s.len(), &mut out) };
    out
}

pub fn null(env: napi_env) -> napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: valid out-param.
    unsafe { napi_get_null(env, &mut out) };
    out
}

pub fn uint32(env: napi_env, n: u32) -> napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: valid out-param.
    unsafe { napi_create_uint32(env, n, &mut out) };
    out
}

pub fn double(env: napi_env, n: f64) -> napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: valid out-param.
    unsafe { napi_create_double(env, n, &mut out) };
    out
}

pub fn set(env: napi_env, obj: napi_value, name: &str, value: napi_value) {
    let name = CString::new(name).unwrap_or_default();
    // SAFETY: name is NUL-terminated; obj and value are live handles of this call.
    unsafe { napi_set_named_property(env, obj, name.as_ptr(), value) };
}

pub fn export(env: napi_env, exports: napi_value, name: &str, f: napi_callback) {
    let mut func = ptr::null_mut();
    // SAFETY: name bytes are valid for the call; f is a valid extern "C" callback.
    unsafe { napi_create_function(env, name.as_ptr() as *const _, name.len(), f, ptr::null_mut(), &mut func) };
    set(env, exports, name, func);
}
