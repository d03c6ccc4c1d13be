//! Hand-written declarations of the Node-API functions the addon calls (no napi crate offline),
//! and of the few libuv functions it needs to watch a descriptor from the JS thread's event loop
//! (Node exports its libuv for addons; uv.h's handles stay opaque here, sized at run time).
//! The symbols stay undefined in the .so and resolve against the node executable at dlopen time.
//! Signatures follow js_native_api.h / node_api.h (Node-API version 8, available in Node 20) and
//! uv.h.

#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_void};

pub type napi_env = *mut c_void;
pub type napi_value = *mut c_void;
pub type napi_ref = *mut c_void;
pub type napi_callback_info = *mut c_void;
pub type napi_threadsafe_function = *mut c_void;
pub type napi_status = c_int;
pub type napi_callback = unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value;
pub type napi_finalize = unsafe extern "C" fn(napi_env, *mut c_void, *mut c_void);
pub type napi_threadsafe_function_call_js = unsafe extern "C" fn(napi_env, napi_value, *mut c_void, *mut c_void);
pub type cleanup_hook = unsafe extern "C" fn(*mut c_void);
pub type napi_async_context = *mut c_void;
pub type napi_callback_scope = *mut c_void;
pub type napi_handle_scope = *mut c_void;
pub type napi_async_cleanup_hook_handle = *mut c_void;
pub type napi_async_cleanup_hook = unsafe extern "C" fn(napi_async_cleanup_hook_handle, *mut c_void);
pub type uv_loop = *mut c_void;
/// A uv_poll_t (a uv_handle_t: its first field is the user's `data` pointer).
pub type uv_handle = *mut c_void;
pub type uv_poll_cb = unsafe extern "C" fn(uv_handle, c_int, c_int);
pub type uv_close_cb = unsafe extern "C" fn(uv_handle);

pub const NAPI_OK: napi_status = 0;
pub const TSFN_BLOCKING: c_int = 1;
pub const TSFN_RELEASE: c_int = 0;
pub const TYPEDARRAY_INT32: c_int = 5;
pub const TYPEDARRAY_FLOAT64: c_int = 8;
/// uv_handle_type's UV_POLL, and uv_poll_event's UV_READABLE.
pub const UV_POLL: c_int = 8;
pub const UV_READABLE: c_int = 1;
/// napi_valuetype values this addon tells apart.
pub const VALUETYPE_UNDEFINED: c_int = 0;
pub const VALUETYPE_FUNCTION: c_int = 7;

extern "C" {
    pub fn napi_create_function(env: napi_env, name: *const c_char, len: usize, cb: napi_callback, data: *mut c_void, result: *mut napi_value) -> napi_status;
    pub fn napi_set_named_property(env: napi_env, obj: napi_value, name: *const c_char, value: napi_value) -> napi_status;
    pub fn napi_get_cb_info(env: napi_env, info: napi_callback_info, argc: *mut usize, argv: *mut napi_value, this: *mut napi_value, data: *mut *mut c_void) -> napi_status;
    pub fn napi_get_buffer_info(env: napi_env, value: napi_value, data: *mut *mut c_void, len: *mut usize) -> napi_status;
    pub fn napi_get_typedarray_info(env: napi_env, value: napi_value, kind: *mut c_int, len: *mut usize, data: *mut *mut c_void, ab: *mut napi_value, offset: *mut usize) -> napi_status;
    pub fn napi_get_array_length(env: napi_env, value: napi_value, result: *mut u32) -> napi_status;
    pub fn napi_get_element(env: napi_env, obj: napi_value, index: u32, result: *mut napi_value) -> napi_status;
    pub fn napi_get_value_double(env: napi_env, value: napi_value, result: *mut f64) -> napi_status;
    pub fn napi_typeof(env: napi_env, value: napi_value, result: *mut c_int) -> napi_status;
    pub fn napi_create_double(env: napi_env, value: f64, result: *mut napi_value) -> napi_status;
    pub fn napi_set_instance_data(env: napi_env, data: *mut c_void, finalize: napi_finalize, hint: *mut c_void) -> napi_status;
    pub fn napi_get_instance_data(env: napi_env, data: *mut *mut c_void) -> napi_status;
    pub fn napi_create_uint32(env: napi_env, value: u32, result: *mut napi_value) -> napi_status;
    pub fn napi_get_boolean(env: napi_env, value: bool, result: *mut napi_value) -> napi_status;
    pub fn napi_create_string_utf8(env: napi_env, s: *const c_char, len: usize, result: *mut napi_value) -> napi_status;
    pub fn napi_create_array_with_length(env: napi_env, len: usize, result: *mut napi_value) -> napi_status;
    pub fn napi_set_element(env: napi_env, obj: napi_value, index: u32, value: napi_value) -> napi_status;
    pub fn napi_get_undefined(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_get_null(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_throw_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
    pub fn napi_create_external(env: napi_env, data: *mut c_void, finalize: napi_finalize, hint: *mut c_void, result: *mut napi_value) -> napi_status;
    pub fn napi_get_value_external(env: napi_env, value: napi_value, result: *mut *mut c_void) -> napi_status;
    pub fn napi_create_reference(env: napi_env, value: napi_value, initial: u32, result: *mut napi_ref) -> napi_status;
    pub fn napi_delete_reference(env: napi_env, r: napi_ref) -> napi_status;
    pub fn napi_get_reference_value(env: napi_env, r: napi_ref, result: *mut napi_value) -> napi_status;
    pub fn napi_call_function(env: napi_env, recv: napi_value, func: napi_value, argc: usize, argv: *const napi_value, result: *mut napi_value) -> napi_status;
    pub fn napi_add_env_cleanup_hook(env: napi_env, fun: cleanup_hook, arg: *mut c_void) -> napi_status;
    #[allow(clippy::too_many_arguments)]
    pub fn napi_create_threadsafe_function(
        env: napi_env,
        func: napi_value,
        async_resource: napi_value,
        async_resource_name: napi_value,
        max_queue_size: usize,
        initial_thread_count: usize,
        thread_finalize_data: *mut c_void,
        thread_finalize_cb: Option<napi_finalize>,
        context: *mut c_void,
        call_js_cb: Option<napi_threadsafe_function_call_js>,
        result: *mut napi_threadsafe_function,
    ) -> napi_status;
    pub fn napi_call_threadsafe_function(f: napi_threadsafe_function, data: *mut c_void, mode: c_int) -> napi_status;
    pub fn napi_release_threadsafe_function(f: napi_threadsafe_function, mode: c_int) -> napi_status;
    pub fn napi_ref_threadsafe_function(env: napi_env, f: napi_threadsafe_function) -> napi_status;
    pub fn napi_unref_threadsafe_function(env: napi_env, f: napi_threadsafe_function) -> napi_status;
    pub fn napi_get_uv_event_loop(env: napi_env, result: *mut uv_loop) -> napi_status;
    pub fn napi_async_init(env: napi_env, resource: napi_value, name: napi_value, result: *mut napi_async_context) -> napi_status;
    pub fn napi_async_destroy(env: napi_env, context: napi_async_context) -> napi_status;
    pub fn napi_open_callback_scope(env: napi_env, resource: napi_value, context: napi_async_context, result: *mut napi_callback_scope) -> napi_status;
    pub fn napi_close_callback_scope(env: napi_env, scope: napi_callback_scope) -> napi_status;
    pub fn napi_open_handle_scope(env: napi_env, result: *mut napi_handle_scope) -> napi_status;
    pub fn napi_close_handle_scope(env: napi_env, scope: napi_handle_scope) -> napi_status;
    pub fn napi_is_exception_pending(env: napi_env, result: *mut bool) -> napi_status;
    pub fn napi_get_and_clear_last_exception(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_fatal_exception(env: napi_env, err: napi_value) -> napi_status;
    pub fn napi_add_async_cleanup_hook(env: napi_env, hook: napi_async_cleanup_hook, arg: *mut c_void, remove_handle: *mut napi_async_cleanup_hook_handle) -> napi_status;
    pub fn napi_remove_async_cleanup_hook(remove_handle: napi_async_cleanup_hook_handle) -> napi_status;
    pub fn uv_handle_size(kind: c_int) -> usize;
    pub fn uv_poll_init(event_loop: uv_loop, handle: uv_handle, fd: c_int) -> c_int;
    pub fn uv_poll_start(handle: uv_handle, events: c_int, cb: uv_poll_cb) -> c_int;
    pub fn uv_close(handle: uv_handle, cb: uv_close_cb);
    pub fn uv_ref(handle: uv_handle);
    pub fn uv_unref(handle: uv_handle);
}
