//! Descriptor checks, separate from `dlopen` so that unit tests can feed hand-made
//! descriptors.

use crate::error::Problem;
use crate::inprocess::{Fns, SessionFns};
use recap_abi::ffi::{
    ABI_MAJOR, DESCRIPTOR_V1_SIZE, DescriptorHeader, MAGIC, PluginDescriptorV1, RecapStr,
};
use recap_abi::sdk::is_valid_name;

/// What a valid descriptor yields.
#[derive(Debug)]
pub(crate) struct Validated {
    pub name: String,
    pub version: String,
    pub abi_minor: u32,
    pub fns: Fns,
}

const MAX_VERSION_LEN: usize = 64;

/// Checks the descriptor a plugin's entry point returned.
///
/// # Safety
/// `ptr` must be null or point to memory of the plugin that is readable for as many
/// bytes as the descriptor's own `size` field claims (the ABI contract), and the
/// strings it points to must be readable for their lengths.
pub(crate) unsafe fn validate(ptr: *const PluginDescriptorV1) -> Result<Validated, Problem> {
    let bad = |reason: String| Err(Problem::Descriptor(reason));
    if ptr.is_null() {
        return bad(format!("`{}` returned a null pointer", entry_name()));
    }
    if !ptr.is_aligned() {
        return bad("the descriptor pointer is misaligned".into());
    }
    // Read the frozen header first: until `size` is known, the rest may not exist.
    // SAFETY: non-null and aligned (checked above); every descriptor starts with this
    // header (ABI contract), which is a prefix of PluginDescriptorV1.
    let header = unsafe { ptr.cast::<DescriptorHeader>().read() };
    if header.magic != MAGIC {
        return bad(format!(
            "bad magic number {:#018x} (expected {MAGIC:#018x}, the bytes \"RECAPSTR\")",
            header.magic
        ));
    }
    if header.abi_major != ABI_MAJOR {
        return Err(Problem::AbiVersion {
            plugin: header.abi_major,
            host: ABI_MAJOR,
        });
    }
    if header.size < DESCRIPTOR_V1_SIZE {
        return bad(format!(
            "size {} is smaller than the {DESCRIPTOR_V1_SIZE} bytes of an ABI 1.0 descriptor",
            header.size
        ));
    }
    // SAFETY: the plugin declares `size` ≥ size_of::<PluginDescriptorV1>() readable
    // bytes (checked above) and the pointer is aligned; fields are integers, pointers
    // and nullable function pointers, for which any bit pattern the C side can write
    // is valid, except that function pointers must be null or point at code — the ABI
    // contract.
    let d = unsafe { &*ptr };
    let (Some(render), Some(free)) = (d.render, d.free) else {
        return bad(format!(
            "required function{} missing (null)",
            match (d.render.is_none(), d.free.is_none()) {
                (true, true) => "s `render` and `free` are",
                (true, false) => " `render` is",
                _ => " `free` is",
            }
        ));
    };
    let sessions = match (d.session_open, d.session_render, d.session_close) {
        (Some(open), Some(render), Some(close)) => Some(SessionFns {
            open,
            render,
            close,
        }),
        (None, None, None) => None,
        _ => {
            return bad(
                "session_open, session_render and session_close must be all set or all null".into(),
            );
        }
    };
    // SAFETY: forwarded from this function's contract on strings.
    let name = unsafe { read_str(d.name) }.map_err(|e| Problem::Name(e.to_string()))?;
    let name = match std::str::from_utf8(name) {
        Ok(n) => n,
        Err(e) => {
            return Err(Problem::Name(format!(
                "the name is not valid UTF-8 ({e}); bytes {name:02x?}"
            )));
        }
    };
    if name.is_empty() {
        return Err(Problem::Name("the name is empty".into()));
    }
    if !is_valid_name(name) {
        return Err(Problem::Name(format!(
            "{name:?} must match [a-z0-9][a-z0-9_-]{{0,63}} (it is used in spec strings)"
        )));
    }
    // SAFETY: as above.
    let version =
        unsafe { read_str(d.version) }.map_err(|e| Problem::Descriptor(format!("version: {e}")))?;
    let version = std::str::from_utf8(version)
        .map_err(|e| Problem::Descriptor(format!("the version is not valid UTF-8 ({e})")))?;
    if version.is_empty()
        || version.len() > MAX_VERSION_LEN
        || version.chars().any(char::is_control)
    {
        return bad(format!(
            "version {version:?} must be 1 to {MAX_VERSION_LEN} bytes without control characters"
        ));
    }
    Ok(Validated {
        name: name.to_string(),
        version: version.to_string(),
        abi_minor: header.abi_minor,
        fns: Fns {
            render,
            free,
            describe: d.describe,
            sessions,
        },
    })
}

fn entry_name() -> String {
    recap_abi::DESCRIPTOR_SYMBOL.to_string_lossy().into_owned()
}

/// Borrows the bytes of a descriptor string.
///
/// # Safety
/// A non-null `s.ptr` must be readable for `s.len` bytes for the life of the process.
unsafe fn read_str(s: RecapStr) -> Result<&'static [u8], &'static str> {
    if s.ptr.is_null() {
        return if s.len == 0 {
            Ok(&[])
        } else {
            Err("null pointer with a non-zero length")
        };
    }
    if s.len > isize::MAX as usize {
        return Err("impossible length");
    }
    // SAFETY: the caller guarantees `len` readable bytes at a non-null pointer, and the
    // library holding them is never unloaded.
    Ok(unsafe { std::slice::from_raw_parts(s.ptr, s.len) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_abi::ffi::RecapBuf;

    unsafe extern "C" fn render(_: *const u8, _: usize, _: *mut RecapBuf) -> i32 {
        0
    }
    unsafe extern "C" fn free(_: RecapBuf) {}
    unsafe extern "C" fn close(_: *mut std::ffi::c_void) {}

    fn good() -> PluginDescriptorV1 {
        PluginDescriptorV1 {
            magic: MAGIC,
            size: DESCRIPTOR_V1_SIZE,
            abi_major: ABI_MAJOR,
            abi_minor: 3,
            name: RecapStr::from_static("fake"),
            version: RecapStr::from_static("1.2.3"),
            render: Some(render),
            free: Some(free),
            describe: None,
            session_open: None,
            session_render: None,
            session_close: None,
        }
    }

    fn check(d: &PluginDescriptorV1) -> Result<Validated, Problem> {
        // SAFETY: `d` is a live, complete descriptor with 'static strings.
        unsafe { validate(d) }
    }

    fn err(d: PluginDescriptorV1) -> String {
        check(&d).unwrap_err().to_string()
    }

    #[test]
    fn accepts_a_good_descriptor() {
        let v = check(&good()).unwrap();
        assert_eq!(
            (v.name.as_str(), v.version.as_str(), v.abi_minor),
            ("fake", "1.2.3", 3)
        );
        assert!(v.fns.sessions.is_none() && v.fns.describe.is_none());
    }

    #[test]
    fn null_pointer() {
        // SAFETY: null is explicitly allowed.
        let e = unsafe { validate(std::ptr::null()) }
            .unwrap_err()
            .to_string();
        assert!(e.contains("null pointer"), "{e}");
    }

    #[test]
    fn each_bad_field_is_named() {
        let mut d = good();
        d.magic = 7;
        assert!(err(d).contains("bad magic number"));
        let mut d = good();
        d.abi_major = 2;
        assert!(err(d).contains("wrong ABI version: the plugin speaks recap strategy ABI 2"));
        let mut d = good();
        d.size = 24;
        assert!(err(d).contains("size 24 is smaller"));
        let mut d = good();
        d.render = None;
        assert!(err(d).contains("`render` is missing"));
        let mut d = good();
        d.free = None;
        assert!(err(d).contains("`free` is missing"));
        let mut d = good();
        d.session_close = Some(close);
        assert!(err(d).contains("all set or all null"));
        let mut d = good();
        d.name = RecapStr::from_static("");
        assert!(err(d).contains("name is empty"));
        let mut d = good();
        d.name = RecapStr::from_static("Bad:Name");
        assert!(err(d).contains("must match"));
        static BAD_UTF8: [u8; 3] = [b'a', 0xff, 0xfe];
        let mut d = good();
        d.name = RecapStr {
            ptr: BAD_UTF8.as_ptr(),
            len: 3,
        };
        assert!(err(d).contains("not valid UTF-8"));
        let mut d = good();
        d.name = RecapStr {
            ptr: std::ptr::null(),
            len: 4,
        };
        assert!(err(d).contains("null pointer with a non-zero length"));
        let mut d = good();
        d.version = RecapStr::from_static("");
        assert!(err(d).contains("version"));
    }

    #[test]
    fn larger_descriptors_from_newer_minors_are_accepted() {
        #[repr(C)]
        struct V1_7 {
            v1: PluginDescriptorV1,
            added_later: u64,
        }
        let mut d = V1_7 {
            v1: good(),
            added_later: 9,
        };
        d.v1.size = std::mem::size_of::<V1_7>();
        d.v1.abi_minor = 7;
        let v = check(&d.v1).unwrap();
        assert_eq!(v.abi_minor, 7);
        assert_eq!(d.added_later, 9);
    }
}
