//! Light when hidden: once the window has closed, give back what only the window used. The
//! heap glibc keeps after WebKit's page and GTK's widgets were freed goes back to the system
//! (`malloc_trim`), and the pages of library and program code this process no longer runs
//! (WebKit's UI side, GTK, the GL driver) are dropped from its memory (`MADV_PAGEOUT`; clean
//! file pages, read again from disk if ever needed). Pages other processes map too are left
//! alone by the kernel. Measured in docs/memory.md.

use std::time::Duration;

/// WebKit tears a closed page down over a moment; trimming before would miss it.
const AFTER_CLOSE: Duration = Duration::from_secs(2);

pub fn after_window_closed() {
    let spawned = std::thread::Builder::new()
        .name("trim".to_string())
        .spawn(|| {
            std::thread::sleep(AFTER_CLOSE);
            match trim() {
                Ok(mappings) => tracing::debug!("gave back memory of {mappings} mappings"),
                Err(e) => tracing::debug!("memory not given back: {e}"),
            }
        });
    if let Err(e) = spawned {
        tracing::debug!("memory not given back: {e}");
    }
}

#[cfg(target_os = "linux")]
fn trim() -> Result<usize, String> {
    // SAFETY: malloc_trim only returns free heap memory to the system.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0)
    };
    let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| e.to_string())?;
    let mut advised = 0;
    for (start, end) in maps.lines().filter_map(code_mapping) {
        // SAFETY: MADV_PAGEOUT changes no contents: the kernel drops clean file pages (and
        // skips the rest); a later access reads them again. A range unmapped meanwhile only
        // makes the call fail.
        let done = unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end.saturating_sub(start),
                libc::MADV_PAGEOUT,
            )
        };
        if done == 0 {
            advised += 1;
        }
    }
    Ok(advised)
}

#[cfg(not(target_os = "linux"))]
fn trim() -> Result<usize, String> {
    Err("only on Linux".to_string())
}

/// `(start, end)` of a line of /proc/self/maps that maps a file of programs or libraries:
/// `7f…000-7f…000 r-xp 00000000 fe:00 1234 /usr/lib/…/libwebkit2gtk-4.1.so.0`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn code_mapping(line: &str) -> Option<(usize, usize)> {
    let mut fields = line.split_whitespace();
    let range = fields.next()?;
    let _perms = fields.next()?;
    let _offset = fields.next()?;
    let _device = fields.next()?;
    let inode = fields.next()?;
    let path = fields.next()?;
    if inode == "0"
        || !path.starts_with('/')
        || path.starts_with("/dev/")
        || path.starts_with("/memfd:")
        || path.starts_with("/SYSV")
    {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    Some((
        usize::from_str_radix(start, 16).ok()?,
        usize::from_str_radix(end, 16).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::code_mapping;

    #[test]
    fn only_mappings_of_files_are_given_back() {
        assert_eq!(
            code_mapping("7f0000001000-7f0000003000 r-xp 00001000 fe:00 1234 /usr/lib/x86_64-linux-gnu/libgtk-3.so.0"),
            Some((0x7f0000001000, 0x7f0000003000))
        );
        for line in [
            "55d000000000-55d000021000 rw-p 00000000 00:00 0 [heap]",
            "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]",
            "7f0000000000-7f0000001000 rw-p 00000000 00:00 0",
            "7f0000000000-7f0000001000 rw-s 00000000 00:05 98 /SYSV00000000 (deleted)",
            "7f0000000000-7f0000001000 rw-s 00000000 00:01 77 /memfd:wayland-shm (deleted)",
            "7f0000000000-7f0000001000 rw-s 00000000 00:06 12 /dev/dri/card0",
        ] {
            assert_eq!(code_mapping(line), None, "{line}");
        }
    }
}
