//! Hand-written declarations of the Node-API functions the addon calls (no napi crate offline).
//! The symbols stay undefined in the .so and resolve against the node executable at dlopen time.
//! Signatures follow js_native_api.h / node_api.h (Node-API version 8, available in Node 20).

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

pub const NAPI_OK: napi_status = 0;
pub const TSFN_BLOCKING: c_int = 1;
pub const TSFN_RELEASE: c_int = 0;
pub const TYPEDARRAY_INT32: c_int = 5;
pub const TYPEDARRAY_FLOAT64: c_int = 8;
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
    pub fn napi_remove_env_cleanup_hook(env: napi_env, fun: cleanup_hook, arg: *mut c_void) -> napi_status;
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
}
